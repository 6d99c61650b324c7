import Glibc

/// Keeps LMDB's rule that the map may be resized (`mdb_env_set_mapsize`) only while no
/// transaction of this process is open.
///
/// Every transaction passes the gate while it is open. A resize closes the gate to new
/// transactions, waits until the open ones have ended, resizes, and opens the gate again. A
/// thread that asks for a resize while it still holds another transaction of its own (which
/// would wait for itself) is refused instead.
final class TransactionGate: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()
    private var open = 0
    private var resizing = false
    /// Open transactions per thread, to refuse a resize that would wait for its own thread.
    private var perThread: [pthread_t: Int] = [:]
    /// Resizes done (tests read it).
    private(set) var resizes = 0

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&changed, nil)
    }

    deinit {
        pthread_cond_destroy(&changed)
        pthread_mutex_destroy(&mutex)
    }

    /// Called before a transaction begins; waits while a resize is under way.
    func enter() {
        pthread_mutex_lock(&mutex)
        while resizing { pthread_cond_wait(&changed, &mutex) }
        open += 1
        perThread[pthread_self(), default: 0] += 1
        pthread_mutex_unlock(&mutex)
    }

    /// `enter`, without waiting: false (nothing entered) while a resize is under way, for a
    /// thread whose work another thread's open transaction is waiting on.
    func tryEnter() -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if resizing { return false }
        open += 1
        perThread[pthread_self(), default: 0] += 1
        return true
    }

    /// Called once the transaction has ended (committed, aborted, or freed by a failed commit).
    func leave() {
        pthread_mutex_lock(&mutex)
        open -= 1
        let me = pthread_self()
        if let n = perThread[me], n > 1 { perThread[me] = n - 1 } else { perThread[me] = nil }
        if open == 0 { pthread_cond_broadcast(&changed) }
        pthread_mutex_unlock(&mutex)
    }

    /// Runs `body` with no transaction of this process open. Returns false, without running it,
    /// when the calling thread itself holds a transaction.
    func exclusively(_ body: () throws(LMDBError) -> Void) throws(LMDBError) -> Bool {
        pthread_mutex_lock(&mutex)
        if perThread[pthread_self()] != nil {
            pthread_mutex_unlock(&mutex)
            return false
        }
        while resizing { pthread_cond_wait(&changed, &mutex) }
        resizing = true
        while open > 0 { pthread_cond_wait(&changed, &mutex) }
        resizes += 1
        pthread_mutex_unlock(&mutex)
        defer {
            pthread_mutex_lock(&mutex)
            resizing = false
            pthread_cond_broadcast(&changed)
            pthread_mutex_unlock(&mutex)
        }
        try body()
        return true
    }
}
