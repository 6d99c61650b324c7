import GoalLedger

/// The hub's schema as data, in the manner of the store's migrations: ordered identifiers, each
/// applied in one transaction together with the row that records it. A hub recording a migration
/// this code does not know is newer than the code, and is refused.
public enum HubSchema {
    /// One step of the schema: applied once, in one transaction with the row that records it.
    public struct Migration: Sendable {
        /// Its name, recorded in the hub once applied; ordered by its leading number.
        public var identifier: String
        /// The SQL it runs.
        public var sql: String
    }

    /// How many hash partitions the events and heads tables have (by ledger id).
    public static let partitions = 16

    /// Every migration, in the order they apply.
    public static let migrations: [Migration] = [
        Migration(identifier: "1-events-heads-access", sql: eventsHeadsAccess),
        Migration(identifier: "2-sync-service", sql: syncService),
        Migration(identifier: "3-nonce-expiry", sql: nonceExpiry),
        Migration(identifier: "4-ledger-bytes", sql: ledgerBytes),
        Migration(identifier: "5-service-trust-index", sql: serviceTrustIndex),
    ]

    /// The sync service's own index of each signed ledger's trust: the trust rows it vouched
    /// for, and how far it read each origin. Only the service's role reads and writes it (each
    /// request its own ledger's rows), so a role granted a ledger cannot plant trust in it; it
    /// is derived data, rebuilt by reading the ledger when emptied.
    static let serviceTrustIndex = """
        CREATE TABLE hub.service_trust (
            ledger uuid NOT NULL,
            origin text NOT NULL,
            sequence bigint NOT NULL,
            record bytea NOT NULL,
            PRIMARY KEY (ledger, origin, sequence)
        );
        CREATE TABLE hub.service_scanned (
            ledger uuid NOT NULL,
            origin text NOT NULL,
            head bigint NOT NULL,
            set_aside boolean NOT NULL DEFAULT false,
            last_record bytea NOT NULL,
            PRIMARY KEY (ledger, origin)
        );
        ALTER TABLE hub.service_trust ENABLE ROW LEVEL SECURITY;
        ALTER TABLE hub.service_scanned ENABLE ROW LEVEL SECURITY;
        REVOKE ALL ON hub.service_trust, hub.service_scanned FROM PUBLIC;
        GRANT SELECT, INSERT, UPDATE ON hub.service_trust, hub.service_scanned TO hub_service;
        CREATE POLICY service_request_ledger ON hub.service_trust TO hub_service
            USING (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid)
            WITH CHECK (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid);
        CREATE POLICY service_request_ledger ON hub.service_scanned TO hub_service
            USING (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid)
            WITH CHECK (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid);
        """

    /// The body of `hub.advance_heads` that refuses a statement whose new rows leave a gap in
    /// an origin's sequence (shared by every version of the function).
    static let refuseGaps = """
        IF EXISTS (
            SELECT 1
            FROM (SELECT ledger, origin, min(sequence) AS first, max(sequence) AS last, count(*) AS n
                  FROM new_rows GROUP BY ledger, origin) s
            LEFT JOIN hub.heads h USING (ledger, origin)
            WHERE s.first <> coalesce(h.head, 0) + 1 OR s.last - s.first + 1 <> s.n
        ) THEN
            SELECT s.ledger, s.origin, s.sequence, s.event_id, s.previous INTO bad
            FROM (SELECT n.ledger, n.origin, n.sequence, n.event_id,
                         coalesce(lag(n.sequence) OVER (PARTITION BY n.ledger, n.origin ORDER BY n.sequence),
                                  h.head, 0) AS previous
                  FROM new_rows n LEFT JOIN hub.heads h USING (ledger, origin)) s
            WHERE s.sequence <> s.previous + 1
            ORDER BY s.origin, s.sequence LIMIT 1;
            RAISE EXCEPTION 'origin % jumps from sequence % to % at event %: a gap',
                bad.origin, bad.previous, bad.sequence, upper(bad.event_id::text)
                USING ERRCODE = 'check_violation';
        END IF;
        """

    /// Each origin's head also counts its records' bytes, so a service can hold a ledger to a
    /// quota without reading its rows.
    static let ledgerBytes = """
        ALTER TABLE hub.heads ADD COLUMN bytes bigint NOT NULL DEFAULT 0;
        UPDATE hub.heads h SET bytes = coalesce(
            (SELECT sum(length(e.record)) FROM hub.events e WHERE e.ledger = h.ledger AND e.origin = h.origin), 0);
        CREATE OR REPLACE FUNCTION hub.advance_heads() RETURNS trigger LANGUAGE plpgsql
        SECURITY DEFINER SET search_path = hub, pg_temp AS $$
        DECLARE
            bad record;
        BEGIN
            \(refuseGaps)
            INSERT INTO hub.heads (ledger, origin, head, bytes)
            SELECT ledger, origin, max(sequence), sum(length(record)) FROM new_rows GROUP BY ledger, origin
            ON CONFLICT (ledger, origin) DO UPDATE SET head = excluded.head, bytes = hub.heads.bytes + excluded.bytes;
            RETURN NULL;
        END
        $$;
        REVOKE ALL ON FUNCTION hub.advance_heads() FROM PUBLIC;
        """

    /// The group role of the sync service (`ledger serve`): one database role for every device,
    /// scoped per request to the request's ledger by row-level security on the setting
    /// `hub.request_ledger`, which the service sets for each transaction (`SET LOCAL`).
    public static let serviceRole = "hub_service"

    /// The sync service's role, its rights and policies, and the nonces it keeps against replays.
    static let syncService = """
        -- Roles are the cluster's: another database's hub may have made it, even at this moment.
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hub_service') THEN
                BEGIN
                    CREATE ROLE hub_service NOLOGIN;
                EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
                END;
            END IF;
        END $$;
        CREATE TABLE hub.nonces (
            ledger uuid NOT NULL,
            nonce text NOT NULL,
            seen timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (ledger, nonce)
        );
        ALTER TABLE hub.nonces ENABLE ROW LEVEL SECURITY;
        REVOKE ALL ON hub.nonces FROM PUBLIC;
        GRANT USAGE ON SCHEMA hub TO hub_service;
        GRANT SELECT ON hub.migrations, hub.heads, hub.access TO hub_service;
        GRANT SELECT, INSERT ON hub.events TO hub_service;
        GRANT SELECT, INSERT, DELETE ON hub.nonces TO hub_service;
        -- Every row the service reads or writes belongs to the request's ledger, and no other.
        CREATE POLICY service_request_ledger ON hub.events TO hub_service
            USING (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid)
            WITH CHECK (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid);
        CREATE POLICY service_request_ledger ON hub.heads FOR SELECT TO hub_service
            USING (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid);
        CREATE POLICY service_request_ledger ON hub.nonces TO hub_service
            USING (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid)
            WITH CHECK (ledger = nullif(current_setting('hub.request_ledger', true), '')::uuid);
        """

    /// The service deletes old nonces of every ledger, though each of its transactions sees
    /// its own ledger's rows only: through a function that runs as the schema's owner and does
    /// that alone.
    static let nonceExpiry = """
        CREATE INDEX nonces_seen ON hub.nonces (seen);
        CREATE FUNCTION hub.forget_nonces(before timestamptz) RETURNS bigint
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ WITH gone AS (DELETE FROM hub.nonces WHERE seen < before RETURNING 1) SELECT count(*) FROM gone $$;
        REVOKE ALL ON FUNCTION hub.forget_nonces(timestamptz) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION hub.forget_nonces(timestamptz) TO hub_service;
        """

    /// Run before any migration: the schema and the table that records migrations.
    static let bootstrap = """
        CREATE SCHEMA IF NOT EXISTS hub;
        CREATE TABLE IF NOT EXISTS hub.migrations (identifier text PRIMARY KEY);
        ALTER TABLE hub.migrations ENABLE ROW LEVEL SECURITY;
        """

    /// Events as the ledger's own binary records plus the columns the hub needs, hash-partitioned
    /// by ledger; each origin's last sequence (kept by a statement trigger that also refuses
    /// gaps); the roles granted each ledger; row-level security on every table.
    static var eventsHeadsAccess: String {
        var sql = """
            CREATE POLICY readable ON hub.migrations FOR SELECT USING (true);

            CREATE TABLE hub.access (
                ledger uuid NOT NULL,
                role name NOT NULL,
                PRIMARY KEY (ledger, role)
            );

            CREATE TABLE hub.events (
                ledger uuid NOT NULL,
                origin text NOT NULL CHECK (origin ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
                sequence bigint NOT NULL CHECK (sequence >= 1),
                event_id uuid NOT NULL,
                hlc bigint NOT NULL,
                record bytea NOT NULL,
                PRIMARY KEY (ledger, origin, sequence),
                UNIQUE (ledger, event_id),
                -- The record's id and clock agree with the columns (EventCodec: a codec version
                -- byte, 1 or later, CRC-32C, id, hlc big-endian).
                CONSTRAINT record_matches_columns CHECK (
                    octet_length(record) > 29 AND get_byte(record, 0) >= 1
                    AND substring(record FROM 6 FOR 16) = uuid_send(event_id)
                    AND substring(record FROM 22 FOR 8) = int8send(hlc))
            ) PARTITION BY HASH (ledger);

            CREATE TABLE hub.heads (
                ledger uuid NOT NULL,
                origin text NOT NULL,
                head bigint NOT NULL,
                PRIMARY KEY (ledger, origin)
            ) PARTITION BY HASH (ledger);

            """
        for table in ["events", "heads"] {
            for r in 0..<partitions {
                let name = "hub.\(table)_p\(r < 10 ? "0" : "")\(r)"
                sql += "CREATE TABLE \(name) PARTITION OF hub.\(table) FOR VALUES WITH (MODULUS \(partitions), REMAINDER \(r));\n"
                // No policy on a partition: only the owner reads it directly.
                sql += "ALTER TABLE \(name) ENABLE ROW LEVEL SECURITY;\n"
            }
        }
        sql += """

            -- Each statement's new rows must continue their origin's sequence without a gap; the
            -- heads advance with them. Runs as the owner: a device's role cannot write heads.
            CREATE FUNCTION hub.advance_heads() RETURNS trigger LANGUAGE plpgsql
            SECURITY DEFINER SET search_path = hub, pg_temp AS $$
            DECLARE
                bad record;
            BEGIN
                \(refuseGaps)
                INSERT INTO hub.heads (ledger, origin, head)
                SELECT ledger, origin, max(sequence) FROM new_rows GROUP BY ledger, origin
                ON CONFLICT (ledger, origin) DO UPDATE SET head = excluded.head;
                RETURN NULL;
            END
            $$;
            REVOKE ALL ON FUNCTION hub.advance_heads() FROM PUBLIC;
            CREATE TRIGGER advance_heads AFTER INSERT ON hub.events
                REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hub.advance_heads();

            -- A role reaches the ledgers it was granted, and nothing else.
            ALTER TABLE hub.access ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own_grants ON hub.access FOR SELECT USING (role = current_user);
            ALTER TABLE hub.events ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own_ledgers_read ON hub.events FOR SELECT
                USING (ledger IN (SELECT a.ledger FROM hub.access a WHERE a.role = current_user));
            CREATE POLICY own_ledgers_write ON hub.events FOR INSERT
                WITH CHECK (ledger IN (SELECT a.ledger FROM hub.access a WHERE a.role = current_user));
            ALTER TABLE hub.heads ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own_ledgers_read ON hub.heads FOR SELECT
                USING (ledger IN (SELECT a.ledger FROM hub.access a WHERE a.role = current_user));
            REVOKE ALL ON ALL TABLES IN SCHEMA hub FROM PUBLIC;
            REVOKE CREATE ON SCHEMA hub FROM PUBLIC;
            """
        return sql
    }
}
