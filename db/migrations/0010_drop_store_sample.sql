-- Custom SQL migration file, put your code below! --
-- The SQL agent's sample shop leaves the trajectory store: its tool now queries a sandbox database of
-- its own (sandbox/sample-seed.ts, `edgerl sandbox setup`), as a role that can read nothing else. Nothing
-- about the tool stays in the store; CASCADE also drops the analyst role's default privileges there.
DROP SCHEMA IF EXISTS "sample" CASCADE;
