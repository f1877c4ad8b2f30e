-- Custom SQL migration file, put your code below! --
-- A read-only role for analysts: it may read every table and view of the trajectory store (and the
-- sample shop) and change nothing. It cannot log in; give people login roles that are members of it:
--   CREATE ROLE alice LOGIN PASSWORD '…' IN ROLE edgerl_analyst;
-- Roles belong to the whole server, so the role may already exist (another database migrated first,
-- possibly at the same moment: hence the exception handler). A migrating user without CREATEROLE gets
-- a warning instead of a failed migration; an administrator can run this file again later.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'edgerl_analyst') THEN
    BEGIN
      CREATE ROLE edgerl_analyst NOLOGIN;
    EXCEPTION
      WHEN duplicate_object OR unique_violation THEN NULL;
      WHEN insufficient_privilege THEN
        RAISE WARNING 'edgerl_analyst not created: % may not create roles; ask an administrator to run db/migrations/0005_analyst_role.sql', current_user;
        RETURN;
    END;
  END IF;
  -- USAGE lets the role see the schemas' objects; SELECT on all tables covers the views too. Default
  -- privileges give it SELECT on tables and views that later migrations (run by this same user) create.
  GRANT USAGE ON SCHEMA public, sample TO edgerl_analyst;
  GRANT SELECT ON ALL TABLES IN SCHEMA public, sample TO edgerl_analyst;
  ALTER DEFAULT PRIVILEGES IN SCHEMA public, sample GRANT SELECT ON TABLES TO edgerl_analyst;
END
$$;
