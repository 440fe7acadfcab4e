# The dashboard: `arena web`, read-only pages and a JSON API over the results store. It plays
# nothing, so it has no bot runtimes and no sandbox. Built from the repository's root:
#   docker build -f deploy/web.Dockerfile -t shengji-arena-web .
ARG PYTHON_IMAGE=python:3.11-slim-trixie
FROM ${PYTHON_IMAGE}

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/shengji-arena
COPY pyproject.toml README.md ./
COPY cli cli
COPY house house
COPY referee referee
COPY scheduler scheduler
COPY web web
COPY lab lab
COPY tools tools
COPY protos protos
COPY sdk sdk
RUN pip install --no-cache-dir -e . \
 && pip install --no-cache-dir --no-deps -e ./sdk/python --config-settings editable_mode=compat \
 && python -c "import web.app, arena_sdk"

RUN useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent arena
USER 10001:10001
ENV PYTHONUNBUFFERED=1
EXPOSE 8000

# no authentication: publish the port only where everyone may see every season (docs/web.md)
ENTRYPOINT ["tini", "--", "arena"]
CMD ["web", "--host", "0.0.0.0", "--port", "8000"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/seasons', timeout=4)"]
