// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "goal-ledger",
    // `Synchronization.Mutex` and `Int128` need these; Linux has no minimum.
    platforms: [.macOS(.v15), .iOS(.v18), .watchOS(.v11), .tvOS(.v18), .visionOS(.v2)],
    products: [
        .library(name: "GoalLedger", targets: ["GoalLedger"]),
        // Sync with other devices: through the sync service (HTTPS, signed requests)…
        .library(name: "LedgerSync", targets: ["LedgerSync"]),
        // …or straight with a PostgreSQL hub, for a service of one's own.
        .library(name: "LedgerHub", targets: ["LedgerHub"]),
        // For an app's tests and previews: a notification center in memory, temporary ledgers.
        .library(name: "GoalLedgerTesting", targets: ["GoalLedgerTesting"]),
        // The system's notification center as a ReminderCenter (Apple platforms; empty elsewhere).
        .library(name: "GoalLedgerNotifications", targets: ["GoalLedgerNotifications"]),
        // The HTML report of a ledger, and the model it draws (goals, heat maps, timelines, reminders).
        .library(name: "LedgerReport", targets: ["LedgerReport"]),
        .executable(name: "ledger", targets: ["ledger"]),
    ],
    targets: [
        // LMDB from Debian's liblmdb-dev, found through pkg-config.
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // The only module that touches LMDB's C API.
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        // libsodium from Debian's libsodium-dev, and the only module that touches its C API:
        // Ed25519 signatures and BLAKE2b hashes for the signed hash chains of events.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .target(name: "Sodium", dependencies: ["CSodium"]),
        // libpq from Debian's libpq-dev (headers in /usr/include/postgresql, found through pkg-config).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // The only module that touches libpq: connections, binary parameters and results, COPY.
        .target(name: "PostgreSQL", dependencies: ["CLibPQ"]),
        // libmicrohttpd from Debian's libmicrohttpd-dev (TLS through GnuTLS), found through pkg-config.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // An HTTP/1.1 server (for `ledger serve`), and the only module that touches libmicrohttpd.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        // The sync service (`ledger serve`): signed device requests in front of a hub.
        .target(
            name: "LedgerService", dependencies: ["GoalLedger", "LedgerHub", "HTTPServer", "RequestSigning", "PostgreSQL", "Sodium"]),
        // CRC-32C with the CPU's instruction where present (C, for the SSE 4.2 intrinsic).
        .target(name: "CChecksum"),
        // Events, codecs, the log, projections and views.
        .target(name: "GoalLedger", dependencies: ["LMDB", "Sodium", "CChecksum"]),
        // The report: what it draws, gathered through the library's views, and its HTML page.
        .target(name: "LedgerReport", dependencies: ["GoalLedger"]),
        // The hub: sync, clone and access through a PostgreSQL database shared by many ledgers.
        .target(name: "LedgerHub", dependencies: ["GoalLedger", "PostgreSQL"]),
        // Conflict scenarios: their format and runner (`ledger scenario run`).
        .target(name: "LedgerScenarios", dependencies: ["GoalLedger", "LedgerFileCenter"]),
        // A notification center kept in a JSON file, and a blocking bridge to run a pass from
        // synchronous code: for the command line, scenarios and the benchmark, not for apps.
        .target(name: "LedgerFileCenter", dependencies: ["GoalLedger"]),
        // The `ledger` command as a library, so tests can run it in-process.
        .target(
            name: "LedgerCommandLine",
            dependencies: [
                "GoalLedger", "LedgerFileCenter", "LedgerReport", "LedgerHub", "LedgerScenarios", "LedgerService", "HTTPServer",
                "LedgerSync",
            ]),
        .executableTarget(name: "ledger", dependencies: ["LedgerCommandLine"]),
        // The benchmark: the ledger against raw LMDB in the same run (`Tools/bench`).
        .target(
            name: "LedgerBenchmarks",
            dependencies: [
                "GoalLedger", "LedgerFileCenter", "LMDB", "LedgerHub", "PostgreSQL", "LedgerService", "LedgerSync", "HTTPServer",
                "RequestSigning", "Sodium",
            ]),
        .executableTarget(name: "ledger-bench", dependencies: ["LedgerBenchmarks"]),
        .target(name: "GoalLedgerNotifications", dependencies: ["GoalLedger"]),
        .target(name: "GoalLedgerTesting", dependencies: ["GoalLedger"]),
        // A small goals app on the public API, run by the test command.
        // The fuzz targets (`Tools/fuzz`, `docs/fuzzing.md`): each feeds bytes to one reader of
        // outside input; `ledger-fuzz` runs them under libFuzzer, or replays files without it.
        .target(
            name: "LedgerFuzzing",
            dependencies: [
                "GoalLedger", "RequestSigning", "LedgerScenarios", "LedgerFileCenter", "LedgerService", "LedgerHub", "HTTPServer",
                "HubTestSupport", "Sodium",
            ]),
        .executableTarget(name: "ledger-fuzz", dependencies: ["LedgerFuzzing"]),
        .executableTarget(name: "goals-example", dependencies: ["GoalLedger", "LedgerSync"], path: "Examples/GoalsApp"),
        // HTTP Message Signatures (Ed25519) and Content-Digest (SHA-256) for requests a device sends.
        .target(name: "RequestSigning", dependencies: ["Sodium"]),
        // The sync service's client: a store syncs and clones over HTTPS with signed requests.
        .target(name: "LedgerSync", dependencies: ["GoalLedger", "RequestSigning", "Sodium"]),
        // Test support: the test run's PostgreSQL server and throwaway databases on it.
        .target(name: "HubTestSupport", dependencies: ["PostgreSQL"], path: "Tests/HubTestSupport"),
        // Test support: events forged with the ledger's own codec and a key of the test's choice.
        .target(name: "LedgerTestSupport", dependencies: ["GoalLedger", "Sodium"], path: "Tests/LedgerTestSupport"),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
        .testTarget(name: "RequestSigningTests", dependencies: ["RequestSigning", "Sodium"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(
            name: "LedgerSyncTests",
            dependencies: ["LedgerSync", "HTTPServer", "GoalLedger", "RequestSigning", "Sodium", "LedgerCommandLine", "LedgerTestSupport"]
        ),
        .testTarget(name: "PostgreSQLTests", dependencies: ["PostgreSQL", "HubTestSupport"]),
        .testTarget(
            name: "GoalLedgerTests",
            dependencies: ["GoalLedger", "LedgerReport", "GoalLedgerTesting", "LedgerFileCenter", "LedgerTestSupport", "Sodium"],
            exclude: ["Golden/records.golden", "Golden/wire.golden", "Fixtures"]),
        .testTarget(name: "LedgerFuzzingTests", dependencies: ["LedgerFuzzing", "GoalLedger", "RequestSigning", "LedgerFileCenter"]),
        .testTarget(name: "LedgerBenchmarksTests", dependencies: ["LedgerBenchmarks", "HubTestSupport", "GoalLedger", "LMDB"]),
        .testTarget(
            name: "LedgerCommandLineTests",
            dependencies: [
                "LedgerCommandLine", "LedgerFileCenter", "ledger", "LedgerHub", "LedgerScenarios", "PostgreSQL", "HubTestSupport",
                "LedgerTestSupport", "Sodium",
                "LedgerService", "HTTPServer", "RequestSigning", "LedgerBenchmarks", "LedgerReport",
            ]
        ),
    ]
)
