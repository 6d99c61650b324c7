import CLMDB
import Glibc

/// An error reported by LMDB, carrying its code and LMDB's own message.
public struct LMDBError: Error, Equatable, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    /// Where the data file is damaged, when this module's own checks found it (see ``DataFile``).
    public let damage: DataFile.Damage?

    public init(code: Int32) {
        self.code = code
        self.message = String(cString: mdb_strerror(code))
        self.damage = nil
    }

    init(code: Int32, message: String, damage: DataFile.Damage? = nil) {
        self.code = code
        self.message = message
        self.damage = damage
    }

    /// The environment's files are open already in this process (LMDB allows one open per
    /// process: closing a second would drop the first one's locks).
    public static let alreadyOpen = LMDBError(code: EBUSY, message: "the environment is already open in this process")
    public var isAlreadyOpen: Bool { self == .alreadyOpen }

    public static let notFoundCode = MDB_NOTFOUND
    public static let mapFullCode = MDB_MAP_FULL
    public static let mapResizedCode = MDB_MAP_RESIZED
    public static let keyExistsCode = MDB_KEYEXIST

    public var isMapFull: Bool { code == MDB_MAP_FULL }
    public var isNotFound: Bool { code == MDB_NOTFOUND }
    public var isKeyExists: Bool { code == MDB_KEYEXIST }

    public var description: String { "LMDB error \(code): \(message)" }

    @inline(__always)
    static func check(_ rc: Int32) throws(LMDBError) {
        if rc != 0 { throw LMDBError(code: rc) }
    }
}
