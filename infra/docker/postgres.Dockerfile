# PostgreSQL from Debian's packages, for the compose stack (no registry image needed).
ARG BASE=timeshare/debian:bookworm
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* \
 && install -d -o postgres -g postgres /var/lib/timeshare-postgres /run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/timeshare-postgres/data
USER postgres
# First start: a cluster with one trusted superuser and the timeshare database (compose-only: the
# port is reachable from the stack's network alone).
CMD ["bash", "-c", "if [ ! -s \"$PGDATA/PG_VERSION\" ]; then initdb -U postgres --auth=trust -E UTF8 >/dev/null && echo 'host all all all trust' >> \"$PGDATA/pg_hba.conf\" && postgres --single -D \"$PGDATA\" postgres <<< 'CREATE DATABASE timeshare;' >/dev/null; fi; exec postgres -c listen_addresses='*' -c fsync=off -c 'unix_socket_directories=/run/postgresql'"]
HEALTHCHECK --interval=2s --timeout=3s --retries=30 CMD ["pg_isready", "-h", "127.0.0.1", "-U", "postgres", "-d", "timeshare"]
