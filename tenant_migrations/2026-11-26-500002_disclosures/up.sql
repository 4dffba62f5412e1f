-- Disclosures (API.md 11; FERPA 34 CFR 99.32): each read of a student's records by a party
-- outside the school (an API key; an integration client), one row per student answered.
-- Written in batches after the read; no foreign key to students, so a batch never fails
-- on a student deleted since, and the record of what was shown outlives the student.
CREATE TABLE disclosures (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    student_id uuid NOT NULL,
    at         timestamptz NOT NULL,
    party_type text NOT NULL,
    party_id   uuid NOT NULL,
    party_name text NOT NULL,
    what       text NOT NULL
);
CREATE INDEX disclosures_student_at ON disclosures (student_id, at DESC, id DESC);
