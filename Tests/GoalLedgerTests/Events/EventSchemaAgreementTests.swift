import Foundation
import Testing

@testable import GoalLedger

/// Keeps `Schemas/events.v2.schema.json`, the JSON decoder and the binary codec in agreement:
/// every type and field the schema describes is accepted, survives the binary codec and prints
/// back unchanged; every limit the schema states is the limit the decoder enforces.
struct EventSchemaAgreementTests {
    static func load(_ version: Int) -> JSONValue {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Schemas/events.v\(version).schema.json")
        return try! JSONParser.parse(Array(try! Data(contentsOf: url)))
    }

    static let schemas: [Int: JSONValue] = [1: load(1), 2: load(2)]
    /// The schema `resolve` and `sample` read `$ref`s from (both files share their common defs).
    static let schema = schemas[2]!

    static func definitions(_ version: Int) -> [(String, JSONValue)] {
        guard case .object(let defs) = schemas[version]!["$defs"]! else { return [] }
        return defs.filter { $0.1["properties"]?["type"]?["const"] != nil }
    }

    /// Every (schema, event type) pair the schema files describe.
    static let cases: [String] = [1, 2].flatMap { v in definitions(v).map { "\(v):\($0.0)" } }

    static func definition(_ c: String) -> (schema: Int, type: String, definition: JSONValue) {
        let parts = c.split(separator: ":")
        let v = Int(parts[0])!
        return (v, String(parts[1]), definitions(v).first { $0.0 == parts[1] }!.1)
    }

    static func resolve(_ s: JSONValue) -> JSONValue {
        if case .string(let ref) = s["$ref"] {
            let name = String(ref.split(separator: "/").last!)
            guard case .object(var target) = schema["$defs"]![name]!, case .object(let local) = s else { return s }
            for (k, v) in local where k != "$ref" {
                target.removeAll { $0.0 == k }
                target.append((k, v))
            }
            return .object(target)
        }
        return s
    }

    /// A value for `s` at the edge of what it allows (longest strings, largest integers).
    static func sample(_ s: JSONValue, _ variant: Int) -> [JSONValue] {
        let s = resolve(s)
        if let c = s["const"] { return [c] }
        if case .array(let options) = s["enum"] { return [options[variant % options.count]] }
        if case .array(let branches) = s["oneOf"], s["type"] == nil { return branches.flatMap { sample($0, variant) } }
        var types: [String] = []
        if case .string(let t) = s["type"] { types = [t] }
        if case .array(let ts) = s["type"] { types = ts.compactMap { if case .string(let t) = $0 { return t } else { return nil } } }
        var out: [JSONValue] = []
        for t in types {
            switch t {
            case "null": out.append(.null)
            case "boolean": out.append(.bool(variant % 2 == 0))
            case "integer":
                if case .number(let max) = s["maximum"] { out.append(.number(max)) } else { out.append(.number(7)) }
            case "number": out.append(.number(variant % 2 == 0 ? 12.5 : 3))
            case "string":
                switch s["format"] {
                case .string("uuid"): out.append(.string("3D2C1B0A-9F8E-4D7C-8B6A-5F4E3D2C1B0\(variant % 10)"))
                case .string("date-time"): out.append(.string("2026-03-04T05:06:07.089Z"))
                case .string("date"): out.append(.string("2028-02-29"))
                case .string("x-iana-time-zone"): out.append(.string("Asia/Tokyo"))
                case .string("x-device-name"): out.append(.string("phone"))
                default:
                    if case .array(let examples) = s["examples"], let first = examples.first {
                        out.append(first)
                        break
                    }
                    if s["pattern"] != nil {
                        out.append(.string("ja_JP"))
                        break
                    }
                    var n = 5
                    if case .number(let max) = s["maxLength"] { n = Int(max) }
                    // Characters, not bytes, are counted: use a two-byte letter.
                    out.append(.string(String(repeating: "é", count: n)))
                }
            case "array":
                out.append(
                    .array(
                        sample(s["items"]!, variant)
                            + sample(s["items"]!, variant + 1).map { v in
                                if case .string(let x) = v { return .string("b" + x.dropFirst()) } else { return v }
                            }))
            case "object":
                // Nested objects may have exclusive members too (an entry's amount or completed).
                let variants = samples(s)
                if !variants.isEmpty { out.append(variants[variant % variants.count]) }
            default: break
            }
        }
        return out
    }

    /// Every maximal event of the type: all properties, one variant per exclusive branch.
    static func samples(_ definition: JSONValue) -> [JSONValue] {
        guard case .object(let props) = definition["properties"] else { return [] }
        var exclusive: [[String]] = [[]]
        if case .array(let branches) = definition["oneOf"] {
            exclusive = branches.map { b in
                guard case .array(let req) = b["required"] else { return [] }
                return req.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
            }
        }
        let allExclusive = Set(exclusive.flatMap { $0 })
        var out: [JSONValue] = []
        for branch in exclusive {
            for variant in 0..<2 {
                var members: [(String, JSONValue)] = []
                for (name, p) in props where !allExclusive.contains(name) || branch.contains(name) {
                    let values = sample(p, variant)
                    members.append((name, values[variant % values.count]))
                }
                out.append(.object(members))
            }
        }
        return out
    }

    @Test(arguments: [1, 2])
    func schemaListsExactlyTheEventTypesOfItsCatalog(_ version: Int) {
        let names = Set(Self.definitions(version).map(\.0))
        // deviceEnrolled is written by the ledger itself (init, clone, device enrol, migrate) and
        // never appended, so the schema of what `append` reads leaves it out.
        #expect(names == Set(EventType.catalog(schema: version).filter { $0 != .deviceEnrolled }.map(\.name)))
    }

    @Test(arguments: cases)
    func everyFieldDecodesSurvivesTheCodecAndPrintsBack(_ c: String) throws {
        let (version, type, definition) = Self.definition(c)
        let samples = Self.samples(definition)
        #expect(!samples.isEmpty)
        for sample in samples {
            let d = try EventDraft(json: sample, schema: version)
            let event = Event(
                id: d.id!, origin: "phone", sequence: 3, hlc: HLC(milliseconds: d.at!.milliseconds, counter: 2),
                at: d.at!, schema: 2, payload: d.payload)
            let decoded = try EventCodec.decode(EventCodec.encode(event))
            #expect(decoded == event, "binary round trip of \(JSONWriter.message(sample))")
            let printed = event.json()
            guard case .object(let members) = sample else { continue }
            for (key, value) in members {
                #expect(
                    printed[key] == value,
                    "\(type).\(key): sent \(JSONWriter.message(value)), printed \(printed[key].map(JSONWriter.message) ?? "nothing")")
            }
        }
    }

    @Test(arguments: cases)
    func unknownFieldsAndMissingRequiredFieldsAreNamed(_ c: String) throws {
        let (version, type, definition) = Self.definition(c)
        guard case .object(var members) = Self.samples(definition)[0] else { return }
        members.append(("bogus", .number(1)))
        #expect(decodeError(.object(members), schema: version) == FieldError("bogus", "unknown field"))
        members.removeLast()
        // Among many unknown members (more than the 64 the reader tracks in a bit mask), the first is named.
        let many = members + (0..<70).map { ("x\($0)", JSONValue.number(1)) }
        #expect(decodeError(.object(many), schema: version) == FieldError("x0", "unknown field"))
        guard case .array(let required) = definition["required"] else { return }
        for case .string(let name) in required where name != "type" {
            let without = JSONValue.object(members.filter { $0.0 != name })
            let e = decodeError(without, schema: version)
            #expect(e?.field == name, "\(type) without \(name): \(String(describing: e))")
        }
    }

    @Test(arguments: cases)
    func limitsStatedInTheSchemaAreEnforced(_ c: String) throws {
        let (version, type, definition) = Self.definition(c)
        guard case .object(let members) = Self.samples(definition)[0], case .object(let props) = definition["properties"] else { return }
        for (name, p) in props where members.contains(where: { $0.0 == name }) {
            let p = Self.resolve(p)
            var bad: JSONValue?
            if case .number(let max) = p["maximum"] { bad = .number(max + 1) }
            if case .number(let max) = p["maxLength"] { bad = .string(String(repeating: "é", count: Int(max) + 1)) }
            if case .number(let min) = p["exclusiveMinimum"] { bad = .number(min) }
            if p["enum"] != nil { bad = .string("nonsense") }
            if p["format"] == .string("date") { bad = .string("2027-02-29") }
            guard let bad else { continue }
            let changed = JSONValue.object(members.map { $0.0 == name ? (name, bad) : $0 })
            let e = decodeError(changed, schema: version)
            #expect(e?.field == name, "\(type).\(name) = \(JSONWriter.message(bad)): \(String(describing: e))")
        }
    }

    /// Every amount and target the schemas describe states the gate's limit on digits after the
    /// point, and the gate refuses one more digit.
    @Test func amountsAndTargetsStateTheirDigitsAfterThePoint() throws {
        var found = 0
        func walk(_ v: JSONValue) {
            switch v {
            case .object(let members):
                for (key, value) in members {
                    if key == "amount" || key == "target", value["type"] == .string("number") {
                        found += 1
                        #expect(value["x-fractionDigits"] == .number(Double(EventLimits.fractionDigits)), "\(key)")
                    }
                    walk(value)
                }
            case .array(let items): items.forEach(walk)
            default: break
            }
        }
        for v in [1, 2] { walk(Self.schemas[v]!) }
        #expect(found >= 5)
        #expect(throws: FieldError.self) { try Amount(double: 0.0000001, field: "amount") }
        #expect(try Amount(double: 0.000001, field: "amount").micros == 1)
    }
}
