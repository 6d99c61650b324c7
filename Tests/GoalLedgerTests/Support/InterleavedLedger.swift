import Foundation

@testable import GoalLedger

/// A signed ledger of three origins whose events interleave in clock order: the phone (with
/// the first day), and a tablet and a watch cloned from it, then `rounds` rounds in which each
/// appends `perRound` progress entries and the tablet and the watch sync with the phone. The
/// devices named in `alsoCloned` are cloned from the phone after the tablet and the watch,
/// before the rounds: they hold the first day and the enrolments, none of the rounds. Returns
/// the phone; every store lies under `dir`, named for its device.
func interleavedLedger(_ dir: TemporaryDirectory, rounds: Int, perRound: Int, alsoCloned: [String] = []) throws -> LedgerStore {
    let now = instant("2026-11-05T12:00:00Z")
    let cloned = instant("2026-11-01T00:00:00Z")
    let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
    try phone.append(try drafts(dayOne), now: now)
    let tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: cloned)
    let watch = try phone.clone(to: dir.path + "/watch", device: "watch", now: cloned)
    for device in alsoCloned { _ = try phone.clone(to: dir.path + "/" + device, device: device, now: cloned) }
    for round in 0..<rounds {
        for store in [phone, tablet, watch] {
            let lines = (0..<perRound).map { i in
                #"{"type":"progressRecorded","goal":"\#(runGoal)","amount":\#(round + i + 1),"at":"2026-11-0\#(round + 2)T0\#(i + 1):00:00Z"}"#
            }
            try store.append(try drafts(lines), now: now)
        }
        _ = try tablet.sync(with: phone)
        _ = try watch.sync(with: phone)
    }
    _ = try tablet.sync(with: phone)
    return phone
}
