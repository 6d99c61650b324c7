import Foundation

extension LedgerWriter {
    /// Offers the events of a salvaged store again (after a sync filled a gap they waited on);
    /// what was admitted. The same checks as every import.
    public func admit(_ salvaged: SalvagedStore) throws(LedgerError) -> ImportResult {
        let order = salvaged.events.indices.sorted {
            salvaged.events[$0].origin != salvaged.events[$1].origin
                ? String.bytesPrecede(salvaged.events[$0].origin, salvaged.events[$1].origin)
                : salvaged.events[$0].sequence < salvaged.events[$1].sequence
        }
        return try importEvents(
            order.map { salvaged.events[$0] }, records: order.map { salvaged.records[$0] }, from: salvaged.path, unreadable: [],
            recovering: true)
    }
}
