DROP TABLE report_remarks;
