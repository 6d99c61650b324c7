// The fuzz targets as one program (`Tools/fuzz`, `docs/fuzzing.md`).
//
// Built with libFuzzer (`-sanitize=fuzzer -D LEDGER_FUZZ_ENGINE`), it is a libFuzzer binary
// whose target is named by `LEDGER_FUZZ_TARGET`. Built without (as `swift build` builds it), it
// replays files: `ledger-fuzz TARGET FILE_OR_DIRECTORY…` runs each file through the target and
// prints how many it ran; a crash stops it there, as it would stop the fuzzer.
import Foundation
import LedgerFuzzing

#if LEDGER_FUZZ_ENGINE
    nonisolated(unsafe) var chosen = FuzzTarget.record

    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzerInitialize(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
    ) -> CInt {
        let name = ProcessInfo.processInfo.environment["LEDGER_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(
                Data("LEDGER_FUZZ_TARGET must name a target: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
            exit(2)
        }
        chosen = target
        do {
            try target.prepare()
        } catch {
            FileHandle.standardError.write(Data("cannot prepare \(name): \(error)\n".utf8))
            exit(2)
        }
        return 0
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        chosen.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }

    @_silgen_name("LLVMFuzzerRunDriver")
    func fuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// SwiftPM links an executable's `main` to this one; libFuzzer brings its own, which
    /// the linker may prefer. Either runs libFuzzer's driver on the functions above.
    @main
    struct LedgerFuzz {
        static func main() {
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            _ = fuzzerInitialize(&argc, &argv)
            exit(fuzzerRunDriver(&argc, &argv) { fuzzerTestOneInput($0, $1) })
        }
    }
#else
    @main
    struct LedgerFuzz {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                print("usage: ledger-fuzz TARGET FILE_OR_DIRECTORY…  (targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))")
                exit(2)
            }
            do {
                try target.prepare()
            } catch {
                print("cannot prepare \(name): \(error)")
                exit(2)
            }
            var count = 0
            for path in arguments.dropFirst() {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                    print("no such file: \(path)")
                    exit(2)
                }
                let files =
                    isDirectory.boolValue
                    ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 } : [path]
                for file in files {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    target.run(Array(data))
                    count += 1
                }
            }
            print("\(name): \(count) inputs, no crash")
        }
    }
#endif
