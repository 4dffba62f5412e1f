ALTER TABLE marks DROP COLUMN score, DROP COLUMN score_status, DROP COLUMN score_date,
    DROP COLUMN text_score;
DROP TABLE result_ids;
DROP TABLE line_items;
DROP TABLE gradebook_categories;
DROP TABLE oauth_tokens;
DROP TABLE oauth_clients;
