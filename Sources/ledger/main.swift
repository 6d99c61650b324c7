import Foundation
import LedgerCommandLine

setlocale(LC_ALL, "C")
let result = CommandLineTool.run(Array(CommandLine.arguments.dropFirst()), output: { FileHandle.standardOutput.write(Data($0.utf8)) })
FileHandle.standardError.write(Data(result.stderr.utf8))
exit(result.exitCode)
