import Foundation
import Testing

@testable import GoalLedger

struct EventCodecTests {
    static func sampleEvent() throws -> Event {
        let d = try draft(
            #"{"type":"goalEdited","goal":"0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1","title":"Run","details":null,"targetDate":"2027-01-31","unit":null}"#
        )
        var payload = d.payload
        if case .goalEdited(var p) = payload {
            p.replaces = [.title: UUID(), .details: UUID()]
            payload = .goalEdited(p)
        }
        return Event(
            id: UUID(), origin: "tablet", sequence: 300, hlc: HLC(milliseconds: 1_793_602_800_000, counter: 7),
            at: instant("2026-11-02T07:00:00Z"), schema: 2, payload: payload)
    }

    @Test func clearedAndUnchangedFieldsStayDistinct() throws {
        let e = try Self.sampleEvent()
        let back = try EventCodec.decode(EventCodec.encode(e))
        #expect(back == e)
        guard case .goalEdited(let p) = back.payload else {
            Issue.record("wrong type")
            return
        }
        #expect(p.details == .some(nil))
        #expect(p.unit == .some(nil))
        #expect(p.cadence == nil)
        #expect(p.target == nil)
    }

    @Test func everyFlippedBitIsDetected() throws {
        let bytes = EventCodec.encode(try Self.sampleEvent())
        for i in bytes.indices {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[i] ^= 1 << bit
                #expect(throws: RecordDecodingError.self) { try EventCodec.decode(damaged) }
            }
        }
        for cut in 0..<bytes.count {
            #expect(throws: RecordDecodingError.self) { try EventCodec.decode(Array(bytes[..<cut])) }
        }
    }
}
