# Node 20 on the local Debian base (see base-image.sh, which fills this build context).
ARG BASE=timeshare/debian:bookworm
FROM ${BASE}
COPY bin/node /usr/local/bin/node
COPY include/ /usr/local/include/
COPY lib/ /usr/local/lib/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --system --gid 10001 timeshare \
 && useradd --system --uid 10001 --gid timeshare --home-dir /app --shell /usr/sbin/nologin timeshare \
 && node --version
ENV NODE_ENV=production
