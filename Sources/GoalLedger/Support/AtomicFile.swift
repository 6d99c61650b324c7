#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replaces a file as a whole: the bytes go to a new file beside it, created readable by its
/// owner only, synced to disk, then renamed over the old one. A reader sees the old file or
/// the new one, never a part; a crash leaves at most a stray `.name.tmp-…` beside it; the file
/// is never readable by others, not even for a moment. (Foundation's `.atomic` write stages the
/// bytes in a directory of its own under the system's temporary directory, which on Linux is
/// left behind after every write.)
package enum AtomicFile {
    /// Why a write failed: the step and the system's reason ("renaming … over it failed: …").
    package struct Failure: Error {
        package let reason: String
    }

    /// Refuses `path` unless it is a new path or a regular file: a directory, a device node
    /// (`/dev/full`), a FIFO, a socket or a symbolic link is never replaced by a file.
    package static func checkReplaceable(_ path: String) throws(Failure) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            guard errno == ENOENT else { throw Failure(reason: "reading what \(path) is failed: \(String(cString: strerror(errno)))") }
            return
        }
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: kind = "a directory"
        case S_IFCHR, S_IFBLK: kind = "a device"
        case S_IFIFO: kind = "a FIFO (named pipe)"
        case S_IFLNK: kind = "a symbolic link"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        throw Failure(reason: "it is \(kind); only a regular file or a new path is replaced")
    }

    /// Writes `bytes` to `path` as above, when `path` is new or a regular file
    /// (``checkReplaceable(_:)``); the error says which step failed.
    package static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
        try write(to: path) { (file) throws(Failure) in try file.write(bytes) }
    }

    /// The new file, as `write(to:_:)` hands it to its body to write in pieces.
    package struct Sink: ~Copyable {
        fileprivate let fd: Int32

        /// Appends `bytes` to the file.
        package func write(_ bytes: [UInt8]) throws(Failure) {
            let outcome = bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try write(raw) } }
            try outcome.get()
        }

        package func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
            var written = 0
            while written < bytes.count {
                let n = systemWrite(fd, bytes.baseAddress! + written, bytes.count - written)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw AtomicFile.failure("writing") }
                written += n
            }
        }
    }

    /// Writes the file `body` writes (in as many pieces as it likes, so that no more of it is
    /// held in memory than a piece) to `path` as above; when `body` throws, nothing replaces
    /// `path` and the new file is removed.
    package static func write(to path: String, _ body: (borrowing Sink) throws(Failure) -> Void) throws(Failure) {
        try checkReplaceable(path)
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = directory + "/." + name + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("creating \(temporary)") }
        do throws(Failure) {
            try body(Sink(fd: fd))
            guard fsync(fd) == 0 else { throw failure("syncing") }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = failure("renaming \(temporary) over it")
            unlink(temporary)
            throw error
        }
        // The rename itself reaches the disk with the directory.
        let dir = open(directory, O_RDONLY | O_CLOEXEC)
        if dir >= 0 {
            _ = fsync(dir)
            close(dir)
        }
    }

    /// The step `what` failed, with the system's reason.
    fileprivate static func failure(_ what: String) -> Failure { Failure(reason: "\(what) failed: \(String(cString: strerror(errno)))") }
}

/// The system's `write(2)` (the name `write` inside ``AtomicFile`` is its own).
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
