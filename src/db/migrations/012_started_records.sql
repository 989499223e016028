-- 012_started_records: attempts that outlive the process. A handler that kills its process (out of memory,
-- process.exit, a native crash), or a group that rebalances before a batch ends, never reached maxAttempts: the
-- count lived in memory, and the record was tried for ever. A partition whose first batch since an assignment starts
-- where an earlier one started without finishing applies record by record, each counted here (committed) before its
-- handler runs and removed in the transaction that applies it (consumer/started.ts).
CREATE TABLE :schema.started_records (
  consumer    text        NOT NULL,
  topic       text        NOT NULL,
  partition   int         NOT NULL,
  "offset"    bigint      NOT NULL,
  starts      int         NOT NULL,
  -- Starts while applied alone in its transaction (careful): only these can pin a death on the record.
  alone       int         NOT NULL DEFAULT 0,
  first_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, topic, partition, "offset")
);
