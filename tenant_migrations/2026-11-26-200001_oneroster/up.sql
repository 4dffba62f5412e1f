-- OneRoster 1.2 (issue 37), in the school's schema so it moves with the school.

-- Integration clients: OAuth 2.0 client credentials. The secret is kept only as its keyed
-- hash; revoking sets `revoked_at`, and the client's tokens stop working at once.
CREATE TABLE oauth_clients (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         varchar(100) NOT NULL CHECK (char_length(name) >= 1),
    client_id    text NOT NULL UNIQUE,
    secret_hash  text NOT NULL,
    scopes       text[] NOT NULL,
    created_by   uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

-- Access tokens issued to clients, by the keyed hash of the token.
CREATE TABLE oauth_tokens (
    token_hash text PRIMARY KEY,
    client_id  uuid NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes     text[] NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);

-- Gradebook categories (school-wide, so every class has them); sourcedIds as the client
-- chose them. A default set to start from.
CREATE TABLE gradebook_categories (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    sourced_id text NOT NULL UNIQUE CHECK (char_length(sourced_id) BETWEEN 1 AND 255),
    title      text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 255),
    weight     text CHECK (weight ~ '^-?[0-9]+(\.[0-9]+)?$'),
    is_deleted boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO gradebook_categories (sourced_id, title) VALUES
    ('exam', 'Exams'), ('test', 'Tests'), ('assignment', 'Assignments');

-- What OneRoster says of a line item (an exam) beyond the exam itself: the sourcedId a
-- client chose, its category, description, dates and value range.
CREATE TABLE line_items (
    exam_id          uuid PRIMARY KEY REFERENCES exams (id),
    sourced_id       text NOT NULL UNIQUE CHECK (char_length(sourced_id) BETWEEN 1 AND 255),
    category_id      uuid REFERENCES gradebook_categories (id),
    description      text,
    assign_date      timestamptz,
    due_date         timestamptz,
    result_value_min text CHECK (result_value_min ~ '^-?[0-9]+(\.[0-9]+)?$'),
    result_value_max text CHECK (result_value_max ~ '^-?[0-9]+(\.[0-9]+)?$')
);

-- The sourcedId a client chose for a result (a mark).
CREATE TABLE result_ids (
    mark_id    uuid PRIMARY KEY REFERENCES marks (id),
    sourced_id text NOT NULL UNIQUE CHECK (char_length(sourced_id) BETWEEN 1 AND 255)
);

-- A result's own fields, on the mark itself so every write of them goes through the
-- marks' store: the exact decimal score (as its canonical text), the OneRoster
-- scoreStatus, the score's date and a text score.
ALTER TABLE marks
    ADD COLUMN score text,
    ADD COLUMN score_status text,
    ADD COLUMN score_date date,
    ADD COLUMN text_score text;
-- Each check added on its own, under the name PostgreSQL gives an inline one: Citus
-- refuses ADD COLUMN with a constraint on a distributed table (schema-based sharding).
ALTER TABLE marks ADD CONSTRAINT marks_score_check CHECK (score ~ '^-?[0-9]+(\.[0-9]+)?$');
ALTER TABLE marks ADD CONSTRAINT marks_score_status_check CHECK (score_status IN
    ('exempt', 'fully graded', 'not submitted', 'partially graded', 'submitted'));
ALTER TABLE marks ADD CONSTRAINT marks_text_score_check CHECK (char_length(text_score) <= 255);
