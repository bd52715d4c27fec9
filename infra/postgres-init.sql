-- Runs once, when the PostgreSQL volume is first created: the application store lives in
-- its own database beside Temporal's persistence (temporal, temporal_visibility).
CREATE DATABASE durable_loop OWNER temporal;
