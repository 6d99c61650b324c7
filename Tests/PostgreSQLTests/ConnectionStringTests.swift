import Foundation
import PostgreSQL
import Testing

/// Connection strings as the ledger reads them before connecting: TLS for remote servers,
/// passwords kept out of messages. Nothing here reaches a server.
struct ConnectionStringTests {
    static func parameters(_ text: String, _ environment: [String: String] = [:]) throws -> [String: String] {
        var found: [String: String] = [:]
        for p in try ConnectionString(text).parameters(environment: environment) { found[p.keyword] = p.value }
        return found
    }

    @Test(arguments: [
        "postgresql://db.example/hub", "postgresql://phone@db.example:5433/hub", "postgres://10.0.0.7/hub",
        "postgresql://[2001:db8::1]/hub", "postgresql:///hub?host=db.example", "postgresql://localhost,db.example/hub",
        "postgresql://localhost/hub?hostaddr=10.1.2.3", "host=db.example dbname=hub", "postgresql://128.0.0.1/hub",
        "postgresql:///hub?service=central",
    ])
    func aRemoteServerRequiresAVerifiedCertificate(_ url: String) throws {
        #expect(try Self.parameters(url)["sslmode"] == "verify-full", "\(url)")
    }

    @Test(arguments: [
        "postgresql:///hub", "postgresql:///hub?host=/tmp/sockets", "postgresql://localhost/hub", "postgresql://LOCALHOST:5433/hub",
        "postgresql://127.0.0.1/hub", "postgresql://127.8.9.10/hub", "postgresql://[::1]/hub", "postgresql:///hub?hostaddr=::1",
        "postgresql:///hub?host=%2Fvar%2Frun%2Fpostgresql", "host=/tmp dbname=hub", "postgresql://localhost,127.0.0.2/hub",
        "postgresql:///hub?host=@abstract",
    ])
    func aSocketOrLoopbackNeedsNoTLS(_ url: String) throws {
        #expect(try Self.parameters(url)["sslmode"] == nil, "\(url)")
    }

    @Test func theURLsOwnSSLModeWinsAndTheEnvironmentNamesTheHostWhenTheURLDoesNot() throws {
        #expect(try Self.parameters("postgresql://db.example/hub?sslmode=disable")["sslmode"] == nil)
        #expect(try Self.parameters("host=db.example sslmode=require dbname=hub")["sslmode"] == nil)
        #expect(try Self.parameters("postgresql:///hub", ["PGHOST": "db.example"])["sslmode"] == "verify-full")
        #expect(try Self.parameters("postgresql:///hub", ["PGHOST": "/tmp"])["sslmode"] == nil)
        #expect(try Self.parameters("postgresql://localhost/hub", ["PGHOSTADDR": "192.0.2.1"])["sslmode"] == "verify-full")
        #expect(try Self.parameters("postgresql:///hub?host=/tmp", ["PGHOST": "db.example"])["sslmode"] == nil)
        // The string itself comes last, expanded, so that what it sets wins; the timeout comes
        // first unless PGCONNECT_TIMEOUT sets one.
        let list = try ConnectionString("postgresql://db.example/hub").parameters(environment: [:])
        #expect(list.map(\.keyword) == ["connect_timeout", "sslmode", "fallback_application_name", "dbname"])
        #expect(list.last?.value == "postgresql://db.example/hub")
        #expect(try ConnectionString("postgresql:///hub").parameters(environment: ["PGCONNECT_TIMEOUT": "3"]).map(\.keyword) == [
            "fallback_application_name", "dbname",
        ])
    }

    /// Every spelling of a password, each with "s3cret" as the secret (or its encoding).
    static let spellings = [
        "postgresql://phone:s3cret@/hub?host=NOWHERE",
        "postgresql://phone:s3%63ret@/hub?host=NOWHERE",
        "postgresql:///hub?host=NOWHERE&password=s3cret",
        "postgresql:///hub?host=NOWHERE&password=first&password=s3cret",
        "postgresql:///hub?password=s3cret&host=NOWHERE&password=other",
        "postgresql:///hub?host=NOWHERE&pass%77ord=s3cret",
        "postgresql:///hub?host=NOWHERE&%70assword=s3%63ret",
        "postgresql:///hub?host=NOWHERE&sslpassword=s3cret",
        "host=NOWHERE dbname=hub password=s3cret",
        "host=NOWHERE dbname=hub password = 's3cret'",
        // libpq cannot read these, and repeats the part it could not read.
        "postgresql://phone:s3cret%zz@/hub?host=NOWHERE",
        "postgresql:///hub?host=NOWHERE&password=s3cret%G1",
        "postgresql:///hub?host=NOWHERE&password=s3cret=x",
        "postgresql:///hub?host=NOWHERE&password=s3cret&bogus",
        "host=NOWHERE dbname=hub password='s3cret",
        "host=NOWHERE password=s3cret dbname",
        "postgresql://phone:s3cret@[::1/hub",
        // A raw `?` or `/` in the password: libpq reads the first as part of it, the second as
        // the end of a host and port.
        "postgresql://phone:s3?cret@/hub?host=NOWHERE",
        "postgresql://phone:s3cret/x@localhost/hub",
    ]

    @Test(arguments: spellings)
    func noMessageRepeatsThePassword(_ spelling: String) throws {
        let nowhere = FileManager.default.temporaryDirectory.appendingPathComponent("no-server-\(UUID().uuidString)").path
        let url = spelling.replacingOccurrences(of: "NOWHERE", with: nowhere)
        let name = ConnectionString.redacted(url)
        #expect(!name.contains("s3cret") && !name.contains("s3%63ret") && !name.contains("s3?cret"), "\(name)")
        do {
            _ = try Connection(url, connectTimeout: 2)
            Issue.record("connected to nothing")
        } catch {
            #expect(error.isConnectionFailure)
            for text in [error.message, error.description] {
                #expect(!text.contains("s3cret") && !text.contains("s3%63ret") && !text.contains("s3?cret"), "\(text)")
            }
        }
    }

    @Test func aMalformedStringIsRefusedWithLibpqsReasonLessWhatItQuotes() throws {
        do {
            _ = try Connection("postgresql://phone:s3cret%zz@/hub")
            Issue.record("a malformed URL was accepted")
        } catch {
            #expect(error.message == "malformed connection string: invalid percent-encoded token: \"…\"", "\(error.message)")
        }
        // Messages keep everything but the password.
        #expect(
            ConnectionString.redacted("postgresql://phone:pw@db.example:5433/hub?sslmode=require&password=x&application_name=a")
                == "postgresql://phone:…@db.example:5433/hub?sslmode=require&password=…&application_name=a")
        #expect(ConnectionString.redacted("host=/tmp password='a b' user=phone") == "host=/tmp password=… user=phone")
        #expect(ConnectionString.redacted("postgresql:///hub?host=/tmp&user=phone") == "postgresql:///hub?host=/tmp&user=phone")
        #expect(ConnectionString.redacted("postgresql://phone@db.example:5433/hub?user=a@b") == "postgresql://phone@db.example:5433/hub?user=a@b")
        #expect(ConnectionString.redacted("postgresql://phone:a?b@h/hub?password=c") == "postgresql://phone:…@h/hub?password=…")
        #expect(ConnectionString.redacted("postgresql://phone:a/b@h/hub") == "postgresql://phone:…@h/hub")
    }
}
