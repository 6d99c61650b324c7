import Foundation
import LedgerTestSupport
import Sodium
import Testing

@testable import GoalLedger

/// An event a fold sets aside has no effect, trust included: a `deviceEnrolled` that fails the
/// gate enrols nobody, on the store that receives it, after a rebuild, and in `verify`'s fold.
struct SetAsideTrustTests {
    let now = instant("2026-11-05T12:00:00Z")

    @Test func aSetAsideEnrolmentEnrolsNobody() throws {
        let dir = TemporaryDirectory()
        let thief = SigningKey.generate()
        let (phone, laptop) = try ClockBoundTests.ledger(dir, thief: thief, at: now)
        // The watch, enrolled, signs an enrolment of a band from sequence 0, which fails the gate.
        let band = SigningKey.generate()
        let enrolment = try Forger.next(
            .deviceEnrolled(DeviceEnrolled(device: "band", publicKey: band.publicKey, from: 0)), origin: "watch", after: phone, key: thief)
        #expect(throws: FieldError.self) { try enrolment.checkWellFormed() }
        let result = try phone.importEvents([enrolment], from: "the watch")
        #expect(result.imported == 1 && result.setAside == 1, "\(result)")
        #expect(try phone.setAsideEvents().map(\.origin) == ["watch"])
        #expect(try phone.enrolledDevices().contains { $0.device == "band" } == false)
        // So the band's events are refused, as those of a device nobody enrolled.
        let byBand = try Forger.next(.tagAdded(TagAdded(goal: TrustAttackTests.goal, tag: "band")), origin: "band", after: phone, key: band)
        #expect(try phone.importEvents([byBand], from: "the band").imported == 0)
        #expect(try phone.goalState(TrustAttackTests.goal).tags.isEmpty)
        // The same after a rebuild, on a peer, and in verify's own fold.
        try phone.rebuild()
        #expect(try phone.enrolledDevices().contains { $0.device == "band" } == false)
        _ = try laptop.sync(with: phone)
        #expect(try laptop.enrolledDevices().contains { $0.device == "band" } == false)
        for store in [phone, laptop] {
            let report = try store.verify()
            #expect(report.isClean, "\(store.device): \(report.problems)")
        }
    }
}
