DROP TABLE disclosures;
