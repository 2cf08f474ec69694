# An S3-compatible store for the compose stack: s3rver (the npm package our tests use), with the
# bucket created at start. Not for production: there, point TIMESHARE_S3_* at a real object store.
ARG NODE_IMAGE=timeshare/node:20
FROM ${NODE_IMAGE} AS build
COPY infra/docker/build-ca.pem /tmp/build-ca.pem
ENV NODE_EXTRA_CA_CERTS=/tmp/build-ca.pem
WORKDIR /opt/s3rver
RUN npm init -y >/dev/null && npm install --omit=dev --no-audit --no-fund s3rver@3.7.1

FROM ${NODE_IMAGE}
COPY --from=build /opt/s3rver /opt/s3rver
RUN install -d -o timeshare -g timeshare /var/lib/s3rver
USER timeshare
ENV S3_BUCKET=timeshare-checkpoints
EXPOSE 4569
# --no-vhost-buckets: s3rver would otherwise take a Host such as "s3" for a bucket's name (CNAME
# style), and every path-style request to http://s3:4569/<bucket> would miss its bucket.
CMD ["/opt/s3rver/node_modules/.bin/s3rver", "--address", "0.0.0.0", "--port", "4569", "--directory", "/var/lib/s3rver", "--no-vhost-buckets", "--configure-bucket", "timeshare-checkpoints"]
HEALTHCHECK --interval=2s --timeout=3s --retries=30 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:4569/').then((r) => process.exit(r.status < 500 ? 0 : 1), () => process.exit(1))"]
