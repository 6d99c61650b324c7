import Foundation
import GoalLedger
import LedgerCommandLine
import LedgerFileCenter
import Testing

/// The command line's notification center file: read with the same reader as events, so every
/// problem names its field, and a refused file is left as it was.
struct CenterFileTests {
    func fixture() -> CLIFixture {
        let f = CLIFixture()
        f.run(["init", "--device", "phone"])
        let goal = "3C2E1B7A-5D4F-4A21-9E0B-1F2A3B4C5D6E"
        f.run(
            ["append"],
            input: [
                #"{"type":"deviceConfigured","timeZone":"UTC"}"#, #"{"type":"notificationAuthorization","status":"authorized"}"#,
                #"{"type":"goalCreated","goal":"\#(goal)","title":"Read","cadence":"daily","reminder":{"hour":9,"minute":0}}"#,
            ].joined(separator: "\n"))
        return f
    }

    @Test(arguments: [
        (#"{"capacity":-1}"#, #"field "capacity": must be between 0 and 100000, got -1"#),
        (#"{"capacity":64,"colour":"red"}"#, #"field "colour": unknown field"#),
        (#"{"requests":{}}"#, #"field "requests": must be an array"#),
        (#"{"requests":[{"id":"a","goal":"nope","title":"t","body":"b","sound":"default","trigger":{"type":"date","fireAt":"2026-11-06T09:00:00Z","repeats":false}}]}"#, #"field "requests[0].goal": must be a UUID or null"#),
        (#"{"requests":[{"id":"a","goal":null,"title":"t","body":"b","sound":"default","trigger":{"type":"date","fireAt":"2026-11-06T09:00:00Z","repeats":false},"badge":1}]}"#, #"field "requests[0].badge": unknown field"#),
        (#"{"requests":[{"id":"a","goal":null,"title":"t","body":"b","sound":"default","trigger":{"type":"calendar","components":{"hour":25,"minute":0},"repeats":true}}]}"#, #"field "requests[0].trigger.components.hour""#),
        (#"{"requests":[{"id":"a","goal":null,"body":"b","sound":"default","trigger":{"type":"date","fireAt":"2026-11-06T09:00:00Z","repeats":false}}]}"#, #"field "requests[0].title": is required"#),
        (#"{"delivered":[{"id":"a","goal":null,"title":"t","body":"b","deliveredAt":"yesterday"}]}"#, #"field "delivered[0].deliveredAt": must be an RFC 3339 instant"#),
        (#"{"refuse":[1]}"#, #"field "refuse[0]": must be a string"#),
    ])
    func aBadCenterFileNamesItsFieldAndIsLeftAlone(file: String, expected: String) throws {
        let f = fixture()
        let center = f.root + "/center.json"
        try Data(file.utf8).write(to: URL(fileURLWithPath: center))
        let r = f.run(["reconcile", "--center", center])
        #expect(r.exitCode == 3)
        #expect(r.stderr.contains(center + ": " + expected), "\(r.stderr)")
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: center)), as: UTF8.self) == file)
    }

    @Test func aCenterFileRoundTrips() throws {
        let f = fixture()
        let center = f.root + "/center.json"
        #expect(f.run(["reconcile", "--center", center]).exitCode == 0)
        let written = try NotificationCenterFile.load(center, defaultCapacity: 64)
        #expect(written.requests.count == 1 && written.requests[0].nextFireAt == nil && written.requests[0].goal != nil)
        var again = written
        again.path = f.root + "/again.json"
        try again.save()
        #expect(try NotificationCenterFile.load(again.path, defaultCapacity: 64).json == written.json)
    }
}
