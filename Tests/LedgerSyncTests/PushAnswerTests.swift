import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import GoalLedger
import LedgerCommandLine
import Testing

@testable import LedgerSync

/// A push's answer comes from the service: counts no push can have (negative, more than a
/// part holds, past `Int`'s reach when summed) are refused with an error, never summed.
struct PushAnswerTests {
    let client = SyncServiceClient(baseURL: URL(string: "http://127.0.0.1:9/")!)

    func answer(_ json: String) throws(LedgerError) -> ImportResult {
        let prepared = SyncServiceClient.Prepared(
            action: "push", request: URLRequest(url: URL(string: "http://127.0.0.1:9/push")!), device: "phone", ledger: UUID(), bodyBytes: 0)
        return try client.finishPush(SyncServiceClient.Reply(prepared: prepared, status: 200, headers: [:], body: Array(json.utf8)))
    }

    @Test func countsAPushCanHaveAreTaken() throws {
        let limit = SyncServiceClient.pushPartEvents
        #expect(try answer(#"{"inserted":0}"#).imported == 0)
        #expect(try answer(#"{"inserted":\#(limit)}"#).imported == limit)
        let waiting = try answer(
            #"{"inserted":3,"waiting":[{"origin":"watch","sequence":4,"count":\#(UInt32.max),"reason":"its key is not enrolled"}]}"#)
        #expect(waiting.imported == 3 && waiting.waiting.map(\.count) == [Int(UInt32.max)])
    }

    @Test(arguments: [
        #"{"inserted":-1}"#, #"{"inserted":\#(SyncServiceClient.pushPartEvents + 1)}"#, #"{"inserted":\#(Int.max)}"#,
        #"{"inserted":1,"waiting":[{"origin":"watch","sequence":4,"count":-1,"reason":"r"}]}"#,
        #"{"inserted":1,"waiting":[{"origin":"watch","sequence":4,"count":\#(Int.max),"reason":"r"}]}"#,
    ])
    func countsNoPushCanHaveAreRefused(_ json: String) {
        do {
            _ = try answer(json)
            Issue.record("taken: \(json)")
        } catch {
            #expect(error.message.contains("counts no push of at most"), "\(error.message)")
        }
    }
}
