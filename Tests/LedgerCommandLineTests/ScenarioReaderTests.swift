import Foundation
import GoalLedger
import LedgerScenarios
import Testing

/// The scenario reader's messages, word for word: each names its place in the file the way the
/// format always has (`devices[0].name`, `scenario` for the file itself), says what the member
/// must be without the value found, and names an unknown member before any wrong value. The
/// messages of the events and device settings inside a scenario are the event format's own.
struct ScenarioReaderTests {
    /// A scenario of one device, `phone`, with the one step `step`.
    static func oneStep(_ step: String) -> String { #"{"devices":[{"name":"phone"}],"steps":["# + step + "]}" }

    static func message(_ text: String) throws -> String? {
        do {
            _ = try Scenario(json: try JSONParser.parse(Array(text.utf8)), name: "bad")
            return nil
        } catch let error as LedgerError {
            #expect(error.code == .invalidInput)
            return error.message
        }
    }

    @Test(arguments: [
        (#"[]"#, #"scenario: must be an object"#),
        (#"{"devices":[{"name":"phone"}],"steps":[],"x":1}"#, #"scenario: unknown field "x""#),
        (#"{"hub":"yes","devices":[],"x":1}"#, #"scenario: unknown field "x""#),
        (#"{"hub":"yes","devices":[{"name":"phone"}],"steps":[]}"#, #"hub: must be true or false"#),
        (#"{"schema":3,"devices":[{"name":"phone"}],"steps":[]}"#, #"schema: must be 1 or 2"#),
        (#"{"start":"2026-01-01","devices":[{"name":"phone"}],"steps":[]}"#, #"start: must be an RFC 3339 instant"#),
        (
            #"{"start":"1970-01-01T00:00:00Z","devices":[{"name":"phone"}],"steps":[]}"#,
            #"start: must be between 1970-01-02T00:00:00Z and 9999-12-30T23:59:59.999Z"#
        ),
        (#"{"devices":{},"steps":[]}"#, #"devices: must list at least one device"#),
        (#"{"devices":[{"name":"phone"}]}"#, #"steps: must be an array"#),
        (#"{"devices":[7],"steps":[]}"#, #"devices[0]: must be an object"#),
        (#"{"devices":[{"name":5,"x":1}],"steps":[]}"#, #"devices[0]: unknown field "x""#),
        (#"{"devices":[{}],"steps":[]}"#, #"devices[0].name: must be a string"#),
        (#"{"devices":[{"name":["phone"]}],"steps":[]}"#, #"devices[0].name: must be a string"#),
        (#"{"devices":[{"name":"phone"},{"name":"phone"}],"steps":[]}"#, #"devices[1].name: must be a new device name"#),
        (#"{"hub":true,"devices":[{"name":"hub"}],"steps":[]}"#, #"devices[0].name: must be a new device name ("hub" names the hub)"#),
        (#"{"devices":[{"name":"phone","authorization":true}],"steps":[]}"#, #"devices[0].authorization: must be a string"#),
        (
            #"{"devices":[{"name":"phone","authorization":"maybe"}],"steps":[]}"#,
            #"devices[0].authorization: must be one of notDetermined, denied, authorized, provisional, ephemeral"#
        ),
        (
            #"{"devices":[{"name":"phone","timeZone":"UTC","firstWeekday":"monday"}],"steps":[]}"#,
            #"devices[0].firstWeekday: must be an integer, got string"#
        ),
    ])
    func theFileAndItsDevices(_ text: String, _ message: String) throws {
        #expect(try Self.message(text) == "bad: " + message)
    }

    @Test(arguments: [
        (#"{"teleport":"phone"}"#, #"steps[0]: a step is one of append, sync, reconcile, migrate, expect"#),
        (#""append""#, #"steps[0]: a step is one of append, sync, reconcile, migrate, expect"#),
        (#"{"append":"ghost","events":[],"at":"2026-01-01T00:00:00Z","x":1}"#, #"steps[0]: unknown field "x""#),
        (#"{"append":7,"events":[],"at":"2026-01-01T00:00:00Z"}"#, #"steps[0].append: must be a string"#),
        (#"{"append":"ghost","events":[],"at":"2026-01-01T00:00:00Z"}"#, #"steps[0].append: unknown device "ghost""#),
        (#"{"append":"phone","events":{},"at":"2026-01-01T00:00:00Z"}"#, #"steps[0].events: must be an array of events"#),
        (
            #"{"append":"phone","events":[{"type":"goalCreated","goal":"11111111-1111-4111-8111-111111111111","title":7}],"at":7}"#,
            #"steps[0].events[0].title: must be a string, got number"#
        ),
        (#"{"append":"phone","events":[]}"#, #"steps[0].at: must be a string"#),
        (#"{"append":"phone","events":[],"at":"yesterday"}"#, #"steps[0].at: must be an RFC 3339 instant"#),
        (#"{"sync":"phone"}"#, #"steps[0].sync: must be an array of strings"#),
        (#"{"sync":["phone",7]}"#, #"steps[0].sync[1]: must be a string"#),
        (#"{"sync":["phone","phone"]}"#, #"steps[0].sync: must name two different devices"#),
        (#"{"sync":["phone","hub"]}"#, #"steps[0].sync[1]: unknown device "hub""#),
        (#"{"reconcile":"phone","full":true}"#, #"steps[0].at: must be a string"#),
        (#"{"reconcile":"phone","at":"2026-01-01T00:00:00Z","x":1}"#, #"steps[0]: unknown field "x""#),
        (#"{"migrate":"phone","at":"2026-01-01T00:00:00Z"}"#, #"steps[0]: unknown field "at""#),
        (#"{"expect":[]}"#, #"steps[0].expect: must be an object"#),
        (#"{"expect":{"device":"phone"},"x":1}"#, #"steps[0]: unknown field "x""#),
        (#"{"expect":{"device":7,"x":1}}"#, #"steps[0].expect: unknown field "x""#),
        (#"{"expect":{"device":"ghost"}}"#, #"steps[0].expect.device: unknown device "ghost""#),
        // Numbers that would not fit what they count are refused when read (they used to stop
        // the runner, or lose their fraction).
        (
            #"{"append":"phone","at":"2026-01-01T00:00:00Z","events":[],"expectError":1e300}"#,
            #"steps[0].expectError: must be an exit code from 0 to 255"#
        ),
        (
            #"{"append":"phone","at":"2026-01-01T00:00:00Z","events":[],"expectError":2.5}"#,
            #"steps[0].expectError: must be an exit code from 0 to 255"#
        ),
        (#"{"expect":{"device":"phone","entryCount":-1}}"#, #"steps[0].expect.entryCount: must be a whole number of entries"#),
        (#"{"expect":{"device":"phone","entryCount":1.5}}"#, #"steps[0].expect.entryCount: must be a whole number of entries"#),
        // A convergence check between devices the scenario does not have is refused when read
        // (it used to stop the runner on a missing store).
        (#"{"expect":{"converged":["phone","ghost"]}}"#, #"steps[0].expect.converged[1]: unknown device "ghost""#),
        (#"{"expect":{"device":"phone","goal":"g"}}"#, #"steps[0].expect.goal: must be a UUID"#),
        (
            #"{"expect":{"device":"phone","now":"9999-12-31T00:00:00Z"}}"#,
            #"steps[0].expect.now: must be between 1970-01-02T00:00:00Z and 9999-12-30T23:59:59.999Z"#
        ),
        (
            #"{"expect":{"device":"phone","goal":"11111111-1111-4111-8111-111111111111","entries":["e"]}}"#,
            #"steps[0].expect.entries: must be a UUID"#
        ),
        (#"{"expect":{"device":"phone","pending":"a"}}"#, #"steps[0].expect.pending: must be an array of strings"#),
        (#"{"expect":{"device":"phone","converged":["phone",false]}}"#, #"steps[0].expect.converged[1]: must be a string"#),
        (#"{"expect":{"device":"phone","conflicts":[{"goal":7,"x":1}]}}"#, #"steps[0].expect.conflicts[0]: unknown field "x""#),
        (
            #"{"expect":{"device":"phone","conflicts":[{"field":"title","winner":"phone"}]}}"#,
            #"steps[0].expect.conflicts[0].goal: must be a string"#
        ),
        (
            #"{"expect":{"device":"phone","conflicts":[{"goal":"11111111-1111-4111-8111-111111111111","field":"title"}]}}"#,
            #"steps[0].expect.conflicts[0].winner: must be a string"#
        ),
        (
            #"{"expect":{"device":"phone","conflicts":[{"goal":"11111111-1111-4111-8111-111111111111","field":"title","winner":"phone","overwritten":[1]}]}}"#,
            #"steps[0].expect.conflicts[0].overwritten[0]: must be a string"#
        ),
        (#"{"expect":{"title":"Run"}}"#, #"steps[0].expect: needs a device"#),
        (#"{"expect":{"device":"phone","title":"Run"}}"#, #"steps[0].expect: needs a goal"#),
    ])
    func aStep(_ step: String, _ message: String) throws {
        #expect(try Self.message(Self.oneStep(step)) == "bad: " + message)
    }
}
