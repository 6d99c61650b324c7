import Foundation
import GoalLedger

extension LedgerReport {
    /// Writes the report's page (`html(choosingGoals:)`) to `path` whole or not at all: into a
    /// temporary file in the same directory (mode 0600), flushed, then renamed over `path`. A
    /// failure leaves no partial file.
    package func write(to path: String, choosingGoals: String = "") throws(LedgerError) {
        let bytes = Array(html(choosingGoals: choosingGoals).utf8)
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/." + url.lastPathComponent + ".\(UUID().uuidString).tmp"
        func fail(_ reason: String) -> LedgerError {
            unlink(temporary)
            return LedgerError(.invalidInput, "cannot write the report to \(path): \(reason)")
        }
        // Only a regular file or a new path is replaced (never a directory, a device or a FIFO).
        do {
            try AtomicFile.checkReplaceable(path)
        } catch {
            throw LedgerError(.invalidInput, "cannot write the report to \(path): \(error.reason)")
        }
        // A person's history: owner-only from its creation, like exports, whatever the umask.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw fail(String(cString: strerror(errno))) }
        guard fchmod(fd, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw fail(reason)
        }
        var written = 0
        let ok = bytes.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let n = Foundation.write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += n
            }
            return fsync(fd) == 0
        }
        let reason = ok ? nil : String(cString: strerror(errno))
        close(fd)
        if let reason { throw fail(reason) }
        guard rename(temporary, path) == 0 else { throw fail(String(cString: strerror(errno))) }
    }
}
