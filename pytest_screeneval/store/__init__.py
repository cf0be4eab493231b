"""The run store: schema, connection, queries, the audit chain and migrations."""
