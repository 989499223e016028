-- 005_effects: side effects (an e-mail, a charge) scheduled in the handler's transaction and performed afterwards by a
-- sender, with the row's id as the provider's idempotency key. Kafka transactions cannot unsend an e-mail: the row is
-- the promise, the sender keeps it.
CREATE TABLE :schema.effects (
  id              uuid        PRIMARY KEY,
  -- the business key (an order id) and what to do for it: one effect per pair, however often it is scheduled
  key             text        NOT NULL,
  kind            text        NOT NULL,
  payload         jsonb       NOT NULL,
  status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'dead')),
  -- calls started (a claim counts one, even when its sender died before recording the outcome)
  attempts        integer     NOT NULL DEFAULT 0,
  -- due from then; while a sender holds the effect, the end of its lease
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- the claim in flight (NULL when none): only its holder records a failure
  lease_id        uuid,
  -- an earlier call may have reached the provider (a timeout, a sender that died mid-call)
  in_doubt        boolean     NOT NULL DEFAULT false,
  last_code       text,
  last_error      text,
  -- the provider's own id for what it did (a message id)
  provider_ref    text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (key, kind)
);
CREATE INDEX effects_due ON :schema.effects (next_attempt_at) WHERE status = 'pending';
CREATE INDEX effects_dead ON :schema.effects (kind) WHERE status = 'dead';
