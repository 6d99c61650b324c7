import Foundation
import Testing

@testable import GoalLedger

/// `append` reads each line from its text (`EventDraft(jsonText:)`), leaving ids and times in
/// the text instead of making strings of them: it must give exactly what the line's JSON value
/// gives (`EventDraft(json:)`), the same draft or the same error, whatever the line holds.
struct EventTextTests {
    static let goal = "5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E11"
    static let id = "0190A3B0-7C00-7000-8000-000000000001"

    /// The outcome of each reading, as text: the draft, or the error that refused it.
    func outcomes(_ line: String, schema: Int = LedgerStore.currentSchema) -> (viaValue: String, fromText: String) {
        let viaValue = Result { () throws -> EventDraft in try EventDraft(json: JSONParser.parse(line), schema: schema) }
        let fromText = Result { try EventDraft(jsonText: Array(line.utf8), schema: schema) }
        func shown(_ r: Result<EventDraft, any Error>) -> String {
            switch r {
            case .success(let d): return "draft \(d)"
            case .failure(let e): return "\(type(of: e)): \(e)"
            }
        }
        return (shown(viaValue), shown(fromText))
    }

    static let lines: [String] = [
        // Plain lines, each field where the reader leaves it in the text.
        #"{"id":"\#(id)","type":"progressRecorded","at":"2026-11-02T07:00:00Z","goal":"\#(goal)","amount":3}"#,
        #"  {"type":"progressRecorded","goal":"\#(goal)","at":"2026-11-02T07:00:00.250+01:00"}  "#,
        #"{"type":"goalCreated","goal":"\#(goal)","title":"Read","cadence":"daily","progress":{"kind":"measurable","target":5,"unit":"km"},"reminder":{"hour":7,"minute":30},"tags":["a","b"]}"#,
        // Lower-case ids, escapes in ids, times and the type: the same values.
        #"{"type":"progressRecorded","goal":"\#(goal.lowercased())","at":"2026-11-02t07:00:00z"}"#,
        #"{"type":"progress\u0052ecorded","goal":"5E0B1E4A\u002D3C6A-4A44-9F1A-2B7A1C0D9E11","at":"2026-11-02T07:00:00\u005A"}"#,
        #"{"type":"progressRecorded","go\u0061l":"\#(goal)"}"#,
        // Text outside ASCII, in a title and where an id should be.
        #"{"type":"goalCreated","goal":"\#(goal)","title":"Lire 📚 café","cadence":"daily","progress":{"kind":"outcome"}}"#,
        #"{"type":"progressRecorded","goal":"5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9É11"}"#,
        // Ids and times that are not ids and times, or not strings.
        #"{"type":"progressRecorded","goal":"5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E1"}"#,
        #"{"type":"progressRecorded","goal":"5E0B1E4A+3C6A-4A44-9F1A-2B7A1C0D9E11"}"#,
        #"{"type":"progressRecorded","goal":"5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9G11"}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)","at":"2026-02-30T07:00:00Z"}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)","at":"2026-11-02T07:00:00"}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)","at":"2026-11-02T07:00:00.Z"}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)","at":"2026-11-02T07:00:00+01:0"}"#,
        #"{"type":"progressRecorded","goal":12,"at":"2026-11-02T07:00:00Z"}"#,
        #"{"type":"progressRecorded","goal":null}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)","at":true}"#,
        #"{"type":"progressRecorded","id":["\#(id)"],"goal":"\#(goal)"}"#,
        #"{"type":7,"goal":"\#(goal)"}"#,
        #"{"type":"noSuchType","goal":"\#(goal)"}"#,
        // Type names read from the text: near misses of a real one.
        #"{"type":"progress","goal":"\#(goal)"}"#,
        #"{"type":"progressRecordedX","goal":"\#(goal)"}"#,
        #"{"type":"ProgressRecorded","goal":"\#(goal)"}"#,
        #"{"type":"","goal":"\#(goal)"}"#,
        #"{"type":"goalCreated ","goal":"\#(goal)","title":"Read","cadence":"daily","progress":{"kind":"outcome"}}"#,
        #"{"goal":"\#(goal)"}"#,
        // Unknown and repeated members, control characters, broken text.
        #"{"type":"progressRecorded","goal":"\#(goal)","extra":"x"}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)","goal":"\#(goal)"}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)","note":"a"# + "\t" + #"b"}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)"# + "\u{1}" + #""}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)""#,
        #"{"type":"progressRecorded","goal":"\#(goal)"} x"#,
        #"{"type":"progressRecorded","goal":"\#(goal)",}"#,
        #"{"type":"progressRecorded","goal":"\#(goal)\"#,
        // Not an object at all.
        #"["type","progressRecorded"]"#,
        #""progressRecorded""#,
        "",
        "{}",
        "   ",
        #"{"type":"goalCreated","goal":"\#(goal)","title":"Read","cadence":"daily","progress":{"kind":"measurable","target":5,"unit":"km","target":6}}"#,
    ]

    @Test(arguments: lines)
    func aLineReadFromItsTextIsWhatItsValueGives(_ line: String) {
        for schema in 1...LedgerStore.currentSchema {
            let (viaValue, fromText) = outcomes(line, schema: schema)
            #expect(fromText == viaValue, "schema \(schema): \(line)")
        }
    }

    /// A type name matched from its bytes is the type its string names, for every type, and
    /// nothing for a name that is not one (a prefix, a longer name, another case).
    @Test func typeNamesReadFromBytesAreTheTypesTheirStringsName() {
        func fromBytes(_ name: String) -> EventType? {
            Array(name.utf8).withUnsafeBufferPointer { EventType(utf8: $0) }
        }
        for type in EventType.allCases {
            #expect(fromBytes(type.name) == type)
            #expect(fromBytes(type.name) == EventType(name: type.name))
            #expect(fromBytes(String(type.name.dropLast())) == EventType(name: String(type.name.dropLast())))
            #expect(fromBytes(type.name + "s") == nil)
            #expect(fromBytes(type.name.uppercased()) == nil)
        }
        #expect(fromBytes("") == nil)
    }

    /// The readings agree on more than they refuse: the plain line and its escaped spelling
    /// give one draft, and each refusal names its field.
    @Test func escapedAndPlainSpellingsGiveOneDraft() throws {
        let plain = try EventDraft(jsonText: Array(Self.lines[0].utf8))
        let escaped = try EventDraft(
            jsonText: Array(#"{"id":"\#(Self.id)","type":"progressRecorded","at":"2026-11-02T07:00:0\u0030Z","goal":"\#(Self.goal.lowercased())","amount":3}"#.utf8))
        #expect(plain == escaped)
        #expect(plain.id == UUID(uuidString: Self.id))
        #expect(plain.at == Instant(rfc3339: "2026-11-02T07:00:00Z"))
        #expect(throws: FieldError("goal", #"must be a UUID, got "5E0B1E4A-3C6A-4A44-9F1A-2B7A1C0D9E1""#)) {
            try EventDraft(jsonText: Array(Self.lines[8].utf8))
        }
        #expect(throws: FieldError("at", #"must be an RFC 3339 instant, got "2026-02-30T07:00:00Z""#)) {
            try EventDraft(jsonText: Array(Self.lines[11].utf8))
        }
    }
}
