import Glibc
import Synchronization

/// What the `ledger` executable does when the process is stopped by a signal: LMDB trusts its
/// file, and a damaged page it meets can stop the process inside LMDB (an assertion's
/// SIGABRT, an invalid access's SIGSEGV or SIGBUS) where no error can be thrown. The handlers
/// write a message composed beforehand (`write(2)` only, which a signal handler may call) and
/// end the process with an exit code instead of a death by signal:
///
/// - SIGSEGV, SIGBUS, SIGABRT while a store is open: the store is damaged, exit 5, with the
///   message of every damaged store ("damaged at …; restore a backup or recover");
/// - any of those before a store is open, and SIGILL, SIGTRAP, SIGFPE (Swift's own traps):
///   an internal error, exit 1;
/// - SIGTERM and SIGINT end a command (their default), even when its parent left them ignored.
///
/// The library cannot do this for an app: a handler is the process's, and LMDB's abort cannot
/// be caught in process. An app that suspects damage checks the file first
/// (`LedgerStore.checkPages(at:)`), which reads it without LMDB.
public enum CrashGuard {
    private static let capacity = 4096
    /// The damaged-store message and its length (0: no store open yet).
    nonisolated(unsafe) private static var damagedText = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    private static let damagedLength = Atomic<Int>(0)
    nonisolated(unsafe) private static var internalText = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    nonisolated(unsafe) private static var internalLength = 0
    private static let opened = Mutex<[String]>([])
    private static let installed = Atomic<Bool>(false)

    /// Installs the handlers (once; the executable calls it before running a command).
    public static func install() {
        guard !installed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Every static the handlers read is initialized now, not inside a handler.
        damagedLength.store(0, ordering: .releasing)
        _ = damagedText
        _ = internalText
        internalLength = copy(
            "ledger: internal error: the process was stopped by a signal (a bug; if it recurs on this store, run `ledger verify`)\n",
            into: internalText)
        // The handlers run on an alternate stack, so that a stack overflow can still report.
        var stack = stack_t()
        stack.ss_size = 1 << 16
        stack.ss_sp = UnsafeMutableRawPointer.allocate(byteCount: stack.ss_size, alignment: 16)
        stack.ss_flags = 0
        sigaltstack(&stack, nil)
        // A parent may have left some of them blocked (a blocked SIGABRT would leave the
        // process hanging, a blocked fault kills it): unblocked here.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in [SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGTRAP, SIGFPE, SIGTERM, SIGINT] { sigaddset(&unblock, signal) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        // A command stops when asked to, whatever its parent left ignored (an ignored signal
        // stays ignored across exec: a shell's `trap '' TERM`, a supervisor, a process that
        // ran `serve`, which ignores them to stop gracefully): an uncommitted write is rolled
        // back by LMDB, the store stays whole. `serve` installs its own handling afterwards.
        for s in [SIGTERM, SIGINT] { Glibc.signal(s, SIG_DFL) }
        for signal in [SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGTRAP, SIGFPE] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                let n = CrashGuard.damagedLength.load(ordering: .acquiring)
                if n > 0, signal == SIGSEGV || signal == SIGBUS || signal == SIGABRT {
                    _ = write(2, CrashGuard.damagedText, n)
                    _exit(5)
                }
                _ = write(2, CrashGuard.internalText, CrashGuard.internalLength)
                _exit(1)
            }
            action.sa_flags = Int32(SA_ONSTACK) | Int32(bitPattern: UInt32(SA_RESETHAND))
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    /// Tells the guard that the store at `path` is about to be opened: from now on a crash
    /// inside LMDB is reported as its damage.
    static func opening(_ path: String) {
        guard installed.load(ordering: .acquiring) else { return }
        opened.withLock { paths in
            guard !paths.contains(path) else { return }
            paths.append(path)
            let which = paths.count == 1 ? "the store at \(paths[0])" : "a store (\(paths.joined(separator: " or ")))"
            let text =
                "ledger: \(which) is damaged at a page LMDB could not read (it stopped the process); restore a backup or recover (`ledger verify` names the damage; `ledger recover --out NEWDIR --from PEER` builds a new store from what is readable and what a peer holds)\n"
            damagedLength.store(0, ordering: .releasing)
            let n = copy(text, into: damagedText)
            damagedLength.store(n, ordering: .releasing)
        }
    }

    /// Copies `text` into `buffer` (cut at the capacity); the bytes copied.
    private static func copy(_ text: String, into buffer: UnsafeMutablePointer<UInt8>) -> Int {
        let bytes = Array(text.utf8.prefix(capacity))
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: bytes.count) }
        return bytes.count
    }
}
