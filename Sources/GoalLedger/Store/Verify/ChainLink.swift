import Foundation

/// What the chain check needs of one event: its hash, what it says of its predecessor and its
/// signature, and where the log holds it.
struct ChainLink {
    /// The event's hash and its predecessor's as it records it, kept inline (a million events
    /// hold no array each).
    let hash: Hash32
    let previousHash: Hash32?
    let signature: [UInt8]?
    let signer: [UInt8]?
    let position: UInt64

    init(hash: [UInt8], previousHash: [UInt8]?, signature: [UInt8]?, signer: [UInt8]?, position: UInt64) {
        self.hash = Hash32(hash)
        self.previousHash = previousHash.map(Hash32.init)
        self.signature = signature
        self.signer = signer
        self.position = position
    }
}

extension [ChainLink?] {
    /// Puts `link` at `index`, growing the array with gaps; the first link at an index stays.
    mutating func place(_ link: ChainLink, at index: Int) {
        if index >= count { append(contentsOf: repeatElement(nil, count: index - count + 1)) }
        if self[index] == nil { self[index] = link }
    }
}
