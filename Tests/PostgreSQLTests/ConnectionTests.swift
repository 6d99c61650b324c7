import Foundation
import HubTestSupport
import PostgreSQL
import Testing

struct ConnectionTests {
    @Test func binaryParametersComeBackAsSent() throws {
        let c = try Connection(try TestServer.database())
        let id = UUID(uuidString: "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1")!
        let r = try c.query(
            "SELECT $1::int8, $2::text, $3::bytea, $4::uuid, $5::int8[], $6::text[], $7::bool, $8::text IS NULL, cardinality($9::uuid[])",
            [
                .int64(-1_234_567_890_123), .text("Läufe 🏃"), .bytea([0, 1, 254, 255]), .uuid(id), .int64Array([3, -4]),
                .textArray(["a", "b,c"]), .bool(true), .null, .uuidArray([id, id]),
            ])
        #expect(r.rowCount == 1)
        #expect(r.int64(0, 0) == -1_234_567_890_123)
        #expect(r.string(0, 1) == "Läufe 🏃")
        #expect(r.bytes(0, 2) == [0, 1, 254, 255])
        #expect(r.uuid(0, 3) == id)
        #expect(r.bool(0, 6))
        #expect(r.bool(0, 7))
        #expect(r.int64(0, 8) == 2)
        // Arrays arrive whole: check them on the server side.
        let a = try c.query(
            "SELECT $1::int8[] = ARRAY[3,-4]::int8[], $2::text[] = ARRAY['a','b,c']", [.int64Array([3, -4]), .textArray(["a", "b,c"])])
        #expect(a.bool(0, 0) && a.bool(0, 1))
        let empty = try c.query("SELECT cardinality($1::text[])", [.textArray([])])
        #expect(empty.int64(0, 0) == 0)
    }

    @Test func binaryCopyLoadsEveryRow() throws {
        let c = try Connection(try TestServer.database())
        try c.execute("CREATE TABLE t (n int8, s text, b bytea, u uuid, z text)")
        let ids = (0..<5_000).map { _ in UUID() }
        let count = try c.copyIn("COPY t FROM STDIN (FORMAT binary)") { w in
            for (i, id) in ids.enumerated() {
                try w.row(fields: 5)
                w.int64(Int64(i) - 10)
                w.text("row \(i)")
                w.bytes([UInt8(i % 256), 7])
                w.uuid(id)
                w.null()
            }
        }
        #expect(count == 5_000)
        let r = try c.query("SELECT n, s, b, u, z IS NULL FROM t WHERE n = $1", [.int64(4_989)])
        #expect(r.string(0, 1) == "row 4999")
        #expect(r.bytes(0, 2) == [UInt8(4_999 % 256), 7])
        #expect(r.uuid(0, 3) == ids[4_999])
        #expect(r.bool(0, 4))
    }

    @Test func anAbandonedCopyWritesNothingAndTheConnectionGoesOn() throws {
        struct Stop: Error {}
        let c = try Connection(try TestServer.database())
        try c.execute("CREATE TABLE t (n int8)")
        #expect(throws: Stop.self) {
            try c.copyIn("COPY t FROM STDIN (FORMAT binary)") { w in
                try w.row(fields: 1)
                w.int64(1)
                throw Stop()
            }
        }
        #expect(try c.query("SELECT count(*) FROM t").int64(0, 0) == 0)
    }

    @Test func serverErrorsCarryTheirSQLStateMessageAndConstraint() throws {
        let c = try Connection(try TestServer.database())
        try c.execute("CREATE TABLE t (n int8 CONSTRAINT t_key PRIMARY KEY)")
        try c.query("INSERT INTO t VALUES ($1)", [.int64(1)])
        do {
            try c.query("INSERT INTO t VALUES ($1)", [.int64(1)])
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(error.sqlState == "23505")
            #expect(error.isUniqueViolation)
            #expect(error.constraint == "t_key")
            #expect(error.message.contains("duplicate key"))
            #expect(error.detail?.contains("(n)=(1)") == true)
            #expect(!error.isConnectionFailure)
        }
        do {
            try c.execute("SELEC 1")
            Issue.record("a syntax error was accepted")
        } catch {
            #expect(error.sqlState == "42601")
        }
        // A failed COPY names the failure and leaves the connection usable.
        #expect(throws: PostgreSQLError.self) {
            try c.copyIn("COPY t FROM STDIN (FORMAT binary)") { w in
                for _ in 0..<2 {
                    try w.row(fields: 1)
                    w.int64(1)
                }
            }
        }
        #expect(try c.query("SELECT count(*) FROM t").int64(0, 0) == 1)
    }

    @Test func noServerIsAConnectionFailureWithLibpqsReason() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("no-server-\(UUID().uuidString)").path
        do {
            _ = try Connection("postgresql:///x?host=\(dir)")
            Issue.record("connected to nothing")
        } catch {
            #expect(error.isConnectionFailure)
            #expect(error.sqlState == nil)
            #expect(error.message.contains(dir), "\(error.message)")
        }
    }
}
