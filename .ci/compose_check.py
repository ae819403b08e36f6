"""Static check of docker-compose.yml (issue 24), run by `make docker-check` before it builds the image:
the postgres and redis images cannot be pulled here, so the file is checked, not run. It must parse;
its images must be PostgreSQL 15 and Redis 7; every node must be built from this Dockerfile and point
PARLEY_DATABASE_URL and PARLEY_REDIS_URL at those services; nginx's mounted configuration must proxy
to every node on the port the Dockerfile exposes, with the README's event-stream settings; every
PARLEY_* setting it uses must be documented in the README, which must describe this file."""
import re
from urllib.parse import urlparse

import yaml


def check_compose(repo, runtime, parse_env, apt_packages, fail):
    path = f"{repo}/docker-compose.yml"
    try:
        with open(path) as handle:
            compose = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as error:
        fail(f"docker-compose.yml does not parse: {error}")
    services = compose.get("services") if isinstance(compose, dict) else None
    if not isinstance(services, dict):
        fail("docker-compose.yml has no services")

    def image_of(name):
        return str((services.get(name) or {}).get("image", ""))

    postgres = [name for name in services if re.match(r"^postgres:15(\.|-|$)", image_of(name))]
    redis = [name for name in services if re.match(r"^redis:7(\.|-|$)", image_of(name))]
    nginx = [name for name in services if image_of(name).startswith("nginx")]
    nodes = [name for name, service in services.items() if isinstance(service, dict) and service.get("build") == "."]
    if len(postgres) != 1 or len(redis) != 1 or len(nginx) != 1:
        fail(f"docker-compose.yml needs one postgres:15, one redis:7 and one nginx service "
             f"(found {postgres}, {redis}, {nginx})")
    if len(nodes) < 2:
        fail(f"docker-compose.yml builds {len(nodes)} Parley node(s) from the Dockerfile; several nodes need 2 or more")

    exposed = [word.split("/")[0] for instruction in runtime.instructions if instruction.keyword == "EXPOSE"
               for word in instruction.arguments.split()]
    env = {}
    for instruction in runtime.instructions:
        if instruction.keyword == "ENV":
            env.update(parse_env(instruction.arguments))
    port = env.get("PARLEY_PORT", "8080")
    if port not in exposed:
        fail(f"the Dockerfile's PARLEY_PORT {port} is not EXPOSEd ({exposed})")
    if not any(instruction.keyword == "HEALTHCHECK" for instruction in runtime.instructions):
        fail("the nodes rely on the image's HEALTHCHECK, and the Dockerfile has none")
    packages = [package for instruction in runtime.instructions if instruction.keyword == "RUN"
                for package in apt_packages(instruction.arguments)]
    for needed in ("libpq5", "libhiredis0.14"):
        if needed not in packages:
            fail(f"the runtime image lacks {needed}, which PARLEY_DATABASE_URL / PARLEY_REDIS_URL need")

    readme = open(f"{repo}/README.md").read()
    for name in nodes:
        environment = services[name].get("environment") or {}
        if isinstance(environment, list):
            environment = dict(item.split("=", 1) for item in environment)
        # `${VAR:?message}` is compose's, filled in at `up`: a placeholder stands for it here.
        def url(name):
            return urlparse(re.sub(r"\$\{[^}]*\}", "value", str(environment.get(name, ""))))
        database = url("PARLEY_DATABASE_URL")
        if database.scheme not in ("postgres", "postgresql") or database.hostname != postgres[0]:
            fail(f"{name}: PARLEY_DATABASE_URL must be a postgres:// URL on the {postgres[0]} service")
        if (database.port or 5432) != 5432:
            fail(f"{name}: PARLEY_DATABASE_URL's port is not PostgreSQL's 5432")
        cache = url("PARLEY_REDIS_URL")
        if cache.scheme != "redis" or cache.hostname != redis[0] or (cache.port or 6379) != 6379:
            fail(f"{name}: PARLEY_REDIS_URL must be redis://{redis[0]}:6379/…")
        if "PARLEY_PORT" in environment and str(environment["PARLEY_PORT"]) != port:
            fail(f"{name}: PARLEY_PORT {environment['PARLEY_PORT']} is not the exposed {port}")
        for setting in environment:
            if setting.startswith("PARLEY_") and setting not in readme:
                fail(f"{name}: {setting} is not documented in README.md")

    mounts = [str(volume).split(":") for volume in services[nginx[0]].get("volumes") or []]
    configs = [parts[0] for parts in mounts if parts[0].startswith("./")]
    if not configs:
        fail("the nginx service mounts no configuration from this repository")
    conf = open(f"{repo}/{configs[0][2:]}").read()
    servers = re.findall(r"^\s*server\s+([\w.-]+):(\d+)\s*;", conf, re.MULTILINE)
    if sorted(host for host, _ in servers) != sorted(nodes) or any(p != port for _, p in servers):
        fail(f"{configs[0]} must proxy to every node on port {port} (found {servers}, nodes {nodes})")
    for setting in ("proxy_buffering off", "proxy_read_timeout", "proxy_http_version 1.1"):
        if setting not in conf:
            fail(f"{configs[0]} lacks `{setting}` (README: event streams must not be buffered)")
    for phrase in ("docker-compose.yml", "Running several nodes"):
        if phrase not in readme:
            fail(f"README.md does not mention {phrase!r}")
    return len(nodes)
