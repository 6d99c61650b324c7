import Foundation
import LedgerCommandLine

/// Standard output in 64 KiB writes: commands print many lines (one per appended event, one
/// per goal), and a write per line would cost a system call each.
final class BufferedOutput {
    private var buffer: [UInt8] = []

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}

setlocale(LC_ALL, "C")
// A damaged store can stop the process inside LMDB: that is reported (exit 5) instead.
CrashGuard.install()
CommandLineTool.executable = "/proc/self/exe"
let output = BufferedOutput()
let result = CommandLineTool.run(Array(CommandLine.arguments.dropFirst()), output: { output.write($0) })
output.flush()
FileHandle.standardError.write(Data(result.stderr.utf8))
exit(result.exitCode)
