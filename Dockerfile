# syntax=docker/dockerfile:1
# Portico's container image: `docker build -t portico .` at the repository's root.
# Routes go in /var/portico/config/routes (a volume, or a Kubernetes ConfigMap: deploy/kubernetes).

# Build: every package compiled, then packed as npm publishes it (dist/ only, no sources).
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
    && npm run build \
    && node deploy/image-packages.mjs /packs

# Run: the packed server and plugins installed without their development dependencies, as a user
# would install them from npm; nothing of the repository but the example instance. The instance's
# plugins directory is that installation, so every plugin is discovered whatever admin.json says.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    PORTICO_BASE=/var/portico
WORKDIR /opt/portico
COPY --from=build /packs /tmp/packs
RUN echo '{"name": "portico-image", "private": true}' > package.json \
    && npm install --omit=dev --no-audit --no-fund /tmp/packs/*.tgz \
    && rm -rf /tmp/packs /root/.npm \
    && mkdir -p /var/portico/tmp \
    && chown -R node:node /var/portico/tmp \
    && ln -s /opt/portico /var/portico/plugins
COPY --chown=node:node deploy/docker/instance/ /var/portico/
USER node
EXPOSE 8080
# The admin endpoints answer loopback only: the check runs inside the container, as Kubernetes' exec probes do.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:8080/openig/ping').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/opt/portico/node_modules/.bin/portico", "start"]
CMD ["--host", "0.0.0.0", "--log-format", "json"]
