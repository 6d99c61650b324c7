import Dispatch
import Foundation
import GoalLedger
import Synchronization

/// Runs an asynchronous operation to completion from synchronous code (the command line, the
/// scenario runner) on the calling thread: the operation's task prefers an executor whose jobs
/// the caller runs itself, one after another, until the result is there. Nothing waits for a
/// thread of the concurrency pool, so this works even when the caller is one of them; the
/// operation's own awaits (a center of the file or in memory never suspends) cost nothing.
package enum BlockingBridge {
    final class CallerExecutor: TaskExecutor, @unchecked Sendable {
        let jobs = Mutex<[UnownedJob]>([])
        let ready = DispatchSemaphore(value: 0)

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            jobs.withLock { $0.append(job) }
            ready.signal()
        }
    }

    /// The outcome, written once by the task before `done` is set under the lock, read by the
    /// caller only after it saw `done`.
    final class Box<T>: @unchecked Sendable {
        var result: Result<T, LedgerError>?
        let done = Mutex(false)
    }

    package static func run<T>(_ operation: @escaping @Sendable () async throws(LedgerError) -> T) throws(LedgerError) -> T {
        let executor = CallerExecutor()
        let box = Box<T>()
        Task(executorPreference: executor) {
            let outcome: Result<T, LedgerError>
            do throws(LedgerError) {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            box.result = outcome
            box.done.withLock { $0 = true }
            // Wake the caller, which may be waiting for a job.
            executor.ready.signal()
        }
        while true {
            executor.ready.wait()
            while let job = executor.jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                job.runSynchronously(on: executor.asUnownedTaskExecutor())
            }
            if box.done.withLock({ $0 }) { return try box.result!.get() }
        }
    }
}
