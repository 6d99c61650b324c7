import Foundation
import PostgreSQL
import Synchronization

/// The PostgreSQL server of a test run, and throwaway databases on it.
///
/// `Tools/test` starts one server for the whole run (`Tools/hub start`) and names its socket
/// directory in `LEDGER_TEST_PG`. Without that variable (`swift test` run directly), the first
/// test that needs PostgreSQL starts one for this process with the same script, and it is
/// stopped when the process exits. Each test takes a database of its own, so tests run in
/// parallel.
public enum TestServer {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    public static let hubScript = repository + "/Tools/hub"

    private static let started = Mutex<String?>(nil)

    /// The socket directory of the run's server.
    public static func socketDirectory() throws -> String {
        if let dir = ProcessInfo.processInfo.environment["LEDGER_TEST_PG"], !dir.isEmpty { return dir }
        return try started.withLock { dir in
            if let dir { return dir }
            let new = try script(["start", "--owner", String(getpid())])
            dir = new
            atexit {
                if let dir = TestServer.started.withLock({ $0 }) { _ = try? TestServer.script(["stop", dir]) }
            }
            return new
        }
    }

    /// Runs `Tools/hub` with `arguments`; returns its standard output, trimmed. (Spawned and
    /// waited for directly: the server it starts outlives it.)
    @discardableResult
    public static func script(_ arguments: [String]) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("hub-script-\(UUID().uuidString)").path
        defer {
            unlink(output)
            unlink(output + ".err")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, output + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([hubScript] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, hubScript, &actions, nil, argv, environ) == 0 else {
            throw PostgreSQLError(message: "cannot run \(hubScript)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let out = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            let err = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
            throw PostgreSQLError(
                message: "Tools/hub \(arguments.joined(separator: " ")) failed (is PostgreSQL installed? run Tools/setup): \(err)")
        }
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The URL of database `name` on the server in `directory`, as `role`.
    public static func url(_ name: String, directory: String, role: String = "postgres") -> String {
        "postgresql:///\(name)?host=\(directory)&user=\(role)"
    }

    /// A new empty database on the run's server; returns its URL (as the superuser).
    public static func database(on directory: String? = nil) throws -> String {
        let dir = try directory ?? socketDirectory()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try Connection(url("postgres", directory: dir))
        try admin.execute("CREATE DATABASE \(name)")
        return url(name, directory: dir)
    }

    /// A unique role name for a test (roles belong to the whole server).
    public static func roleName(_ prefix: String) -> String {
        prefix + "_" + UUID().uuidString.prefix(8).lowercased()
    }
}
