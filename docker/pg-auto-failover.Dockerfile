# PostgreSQL 15 with pg_auto_failover (Debian's postgresql-15-auto-failover), for the monitor and
# the data nodes of docker/compose.yml. pg_autoctl runs as the postgres user: Postgres refuses
# to run as root.
FROM postgres:15-bookworm
RUN apt-get update \
  && apt-get install -y --no-install-recommends postgresql-15-auto-failover \
  && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/pgaf
USER postgres
WORKDIR /var/lib/postgresql
