import Dispatch
import Foundation

/// Runs an asynchronous operation to completion from synchronous code (the command line, the
/// scenario runner), on a thread of its own: the operation's task prefers an executor backed
/// by a serial dispatch queue, so waiting for it never occupies the thread it needs, even when
/// the caller is itself a thread of the concurrency pool.
package enum BlockingBridge {
    final class QueueExecutor: TaskExecutor, @unchecked Sendable {
        let queue = DispatchQueue(label: "goal-ledger.blocking-bridge")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            queue.async { job.runSynchronously(on: executor) }
        }
    }

    final class Box<T>: @unchecked Sendable {
        var result: Result<T, LedgerError>?
    }

    package static func run<T>(_ operation: @escaping @Sendable () async throws(LedgerError) -> T) throws(LedgerError) -> T {
        let executor = QueueExecutor()
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            do throws(LedgerError) {
                box.result = .success(try await operation())
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }
}
