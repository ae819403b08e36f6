#!/usr/bin/env python3
"""make docker-check: the Dockerfile's two stages, run without a Docker engine.

Everything comes from parsing the Dockerfile (and .dockerignore), so the check cannot drift from it:

1. Build stage. Its `apt-get install` packages are installed on this host when missing (the host is
   the same Debian release with the same Swift as the stage's base image, which is checked), its
   COPY lines are copied into an empty folder standing for WORKDIR, and its other RUN commands run
   there with /bin/sh, as `docker build` would.
2. Runtime stage. Its base `debian:SUITE[-slim]` is made with debootstrap from the host's Debian
   mirror (cached under .build/docker-check), its RUN lines run in a chroot (cached while they and
   the base stay the same, like Docker's layer cache), then COPY (from the context or from the
   build stage), ENV, USER, HEALTHCHECK and CMD are applied as written.
3. Run. CMD runs in the chroot as the image's USER with only the image's environment, as PID 1 of
   fresh PID, network and mount namespaces (so mounts vanish with it and port 8080 is its own).
   Checked: the binary is stripped, a root-owned volume stops it with an error naming the file, the
   team mode (0.0.0.0) refusing to start without a first admin, then with one from the environment:
   the page, /api/health, the HEALTHCHECK command, 401 without a session, sign-in, a streamed demo
   reply, an image upload (decoded by `parley-media-worker`), `parley backup` beside the running server, then SIGTERM must end it with status 0.

Needs root (debootstrap, chroot, namespaces). Every wait is bounded; a failure prints one line
starting with "docker-check: FAIL".
"""

import fnmatch
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(REPO, ".build", "docker-check")
DOCKER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class CheckFailure(Exception):
    pass


def log(message):
    print(f"docker-check: {message}", flush=True)


def fail(message):
    raise CheckFailure(message)


def run(command, timeout, **options):
    """Runs `command` (a list) with a bound; its output goes to ours. Fails on a non-zero status."""
    try:
        result = subprocess.run(command, timeout=timeout, **options)
    except subprocess.TimeoutExpired:
        fail(f"{shlex.join(command)[:200]} did not finish within {timeout} s")
    if result.returncode != 0:
        fail(f"{shlex.join(command)[:200]} exited {result.returncode}")
    return result


# MARK: - Parsing the Dockerfile

class Instruction:
    def __init__(self, keyword, arguments, line):
        self.keyword, self.arguments, self.line = keyword, arguments, line

    def __repr__(self):
        return f"{self.keyword} {self.arguments}"


class Stage:
    def __init__(self, base, name):
        self.base, self.name, self.instructions = base, name, []


def parse_dockerfile(text):
    """Stages with their instructions; continuation lines joined, comment lines dropped (as Docker)."""
    stages, logical, number = [], "", 0
    lines = text.splitlines()
    instructions = []
    for index, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and logical):
            continue  # a comment (or blank line) inside a continued instruction is dropped
        if not logical:
            number = index
        if raw.rstrip().endswith("\\"):
            logical += raw.rstrip()[:-1] + " "
            continue
        logical += raw
        if logical.strip():
            keyword, _, arguments = logical.strip().partition(" ")
            instructions.append(Instruction(keyword.upper(), arguments.strip(), number))
        logical = ""
    for instruction in instructions:
        if instruction.keyword == "FROM":
            words = instruction.arguments.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        elif not stages:
            fail(f"Dockerfile line {instruction.line}: {instruction.keyword} before FROM")
        else:
            stages[-1].instructions.append(instruction)
    return stages


def flags_and_rest(arguments):
    """`--from=build src dst` -> ({"from": "build"}, "src dst")."""
    flags = {}
    words = arguments.split()
    while words and words[0].startswith("--"):
        name, _, value = words.pop(0)[2:].partition("=")
        flags[name] = value
    return flags, " ".join(words)


def exec_or_shell(arguments):
    """A JSON array (exec form) or a string for /bin/sh -c (shell form), as a command list."""
    if arguments.startswith("["):
        return json.loads(arguments)
    return ["/bin/sh", "-c", arguments]


def parse_env(arguments):
    words = shlex.split(arguments)
    if words and "=" not in words[0]:
        return {words[0]: arguments.split(None, 1)[1]}  # legacy `ENV NAME value`
    return dict(word.split("=", 1) for word in words)


def apt_packages(command):
    """Package names of every `apt-get install` in a RUN command."""
    packages = []
    for segment in re.split(r"&&|;|\|\|", command):
        words = segment.split()
        if "apt-get" in words and "install" in words:
            packages += [word for word in words[words.index("install") + 1:] if not word.startswith("-")]
    return packages


# MARK: - The build context (.dockerignore)

def ignore_patterns():
    path = os.path.join(REPO, ".dockerignore")
    patterns = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            exception = line.startswith("!")
            pattern = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
            patterns.append((pattern_regex(pattern), exception))
    return patterns


def pattern_regex(pattern):
    """Docker's pattern syntax (Go filepath.Match plus `**`) as a regular expression."""
    out, index = "", 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out, index = out + "(?:.*/)?", index + 3
        elif pattern.startswith("**", index):
            out, index = out + ".*", index + 2
        elif pattern[index] == "*":
            out, index = out + "[^/]*", index + 1
        elif pattern[index] == "?":
            out, index = out + "[^/]", index + 1
        else:
            out, index = out + re.escape(pattern[index]), index + 1
    return re.compile(out + "$")


def ignored(relative, patterns):
    """Whether the context leaves out `relative`: the last pattern matching it or a parent decides."""
    parts = relative.split("/")
    candidates = ["/".join(parts[:end]) for end in range(1, len(parts) + 1)]
    result = False
    for regex, exception in patterns:
        if any(regex.match(candidate) for candidate in candidates):
            result = not exception
    return result


def copy_from_context(source, destination, patterns):
    """COPY SOURCE DESTINATION from the build context: a directory's contents, or files."""
    matches = sorted(glob.glob(os.path.join(REPO, source)))
    matches = [path for path in matches if not ignored(os.path.relpath(path, REPO), patterns)]
    if not matches:
        fail(f"COPY {source}: nothing in the build context matches")
    for path in matches:
        if os.path.isdir(path):
            copy_tree(path, destination, patterns)
        else:
            target = os.path.join(destination, os.path.basename(path)) if destination.endswith("/") or len(matches) > 1 else destination
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            shutil.copy2(path, target)


def copy_tree(directory, destination, patterns):
    for root, directories, files in os.walk(directory):
        relative_root = os.path.relpath(root, REPO)
        directories[:] = [d for d in directories if not ignored(os.path.join(relative_root, d), patterns)]
        target_root = os.path.join(destination, os.path.relpath(root, directory))
        os.makedirs(target_root, exist_ok=True)
        for name in files:
            if not ignored(os.path.join(relative_root, name), patterns):
                shutil.copy2(os.path.join(root, name), os.path.join(target_root, name), follow_symlinks=False)


# MARK: - Stage 1: build on this host

def host_release():
    values = dict(line.strip().split("=", 1) for line in open("/etc/os-release") if "=" in line)
    return values.get("VERSION_CODENAME", "").strip('"')


def check_build_base(base):
    match = re.fullmatch(r"swift:(\d+\.\d+)(?:\.\d+)?-(\w+)", base)
    if not match:
        fail(f"the build stage's base {base} is not swift:X.Y-CODENAME, which this check models")
    version = subprocess.run(["swift", "--version"], capture_output=True, text=True, timeout=60).stdout
    if f"Swift version {match.group(1)}" not in version:
        fail(f"the build stage uses Swift {match.group(1)}, this host has: {version.strip().splitlines()[0]}")
    if host_release() != match.group(2):
        fail(f"the build stage uses Debian {match.group(2)}, this host is {host_release()}")


def install_missing(packages):
    missing = [p for p in packages if subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True).stdout != "install ok installed"]
    if missing:
        log(f"installing on the host for the build stage: {' '.join(missing)}")
        environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run(["apt-get", "update", "-qq"], 600, env=environment)
        run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing, 900, env=environment)


def build_stage(stage, patterns):
    """Runs the build stage in an empty folder standing for its WORKDIR; returns a function mapping
    a path of the stage's file system (under WORKDIR) to the host."""
    check_build_base(stage.base)
    context = os.path.join(WORK, "build-stage")
    shutil.rmtree(context, ignore_errors=True)
    os.makedirs(context)
    workdir = None
    environment = dict(os.environ)

    def host_path(path):
        path = os.path.normpath(os.path.join(workdir or "/", path))
        if workdir is None or os.path.commonpath([path, workdir]) != workdir:
            fail(f"the build stage uses {path}, outside its WORKDIR {workdir}: the check maps only WORKDIR")
        return os.path.join(context, os.path.relpath(path, workdir))

    for instruction in stage.instructions:
        keyword, arguments = instruction.keyword, instruction.arguments
        if keyword == "WORKDIR":
            if workdir is not None:
                fail("the build stage has two WORKDIRs; the check maps one")
            workdir = os.path.normpath(arguments)
        elif keyword == "ENV":
            environment.update(parse_env(arguments))
        elif keyword == "COPY":
            flags, rest = flags_and_rest(arguments)
            if flags:
                fail(f"line {instruction.line}: COPY flags {flags} in the build stage are not modelled")
            *sources, destination = shlex.split(rest)
            target = host_path(destination)
            for source in sources:
                copy_from_context(source, target + ("/" if destination.endswith("/") else ""), patterns)
        elif keyword == "RUN":
            packages = apt_packages(arguments)
            if packages:
                # apt-get update/install and the list clean-up would change this shared host: the
                # packages are installed when missing instead.
                install_missing(packages)
                continue
            if workdir is None:
                fail(f"line {instruction.line}: RUN before WORKDIR")
            log(f"build stage: {arguments}")
            started = time.monotonic()
            run(["/bin/sh", "-c", arguments], 3600, cwd=host_path("."), env=environment)
            log(f"build stage: done in {time.monotonic() - started:.0f} s")
        else:
            fail(f"line {instruction.line}: {keyword} in the build stage is not modelled by docker-check")
    return host_path


# MARK: - Stage 2: the runtime root file system

def mirror_stanzas(suite):
    """The host's Debian sources (deb822), with its release name replaced by the image's suite."""
    stanzas, current = [], {}
    text = open("/etc/apt/sources.list.d/debian.sources").read()
    for line in text.splitlines() + [""]:
        if not line.strip():
            if current:
                stanzas.append(current)
            current = {}
        elif not line.startswith("#") and ":" in line:
            key, value = line.split(":", 1)
            current[key.strip()] = value.strip()
    release = host_release()
    for stanza in stanzas:
        stanza["Suites"] = stanza.get("Suites", "").replace(release, suite)
    return stanzas


def chroot_run(root, command, user=None, environment=None, timeout=900):
    """Runs `command` in the chroot with /proc and /dev, in a private mount namespace (the mounts
    disappear with it), as `user` ("uid:gid") with exactly `environment`."""
    userspec = [f"--userspec={user}"] if user else []
    env = ["env", "-i"] + [f"{k}={v}" for k, v in (environment or {}).items()]
    script = ('mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && shift && exec chroot "$@"')
    run(["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh", root]
        + userspec + [root] + env + command, timeout)


def base_root(image):
    """debootstrap's minimal Debian for `debian:SUITE[-slim]`, made once and kept."""
    match = re.fullmatch(r"debian:(\w+?)(-slim)?", image)
    if not match:
        fail(f"the runtime base {image} is not debian:SUITE[-slim], which this check models")
    suite = match.group(1)
    stanzas = mirror_stanzas(suite)
    mirror = next((s["URIs"].split()[0] for s in stanzas if suite in s["Suites"].split()), None)
    if not mirror:
        fail(f"no Debian mirror for {suite} in /etc/apt/sources.list.d/debian.sources")
    key = hashlib.sha256(f"{image} {mirror} {stanzas}".encode()).hexdigest()[:12]
    root = os.path.join(WORK, f"base-{suite}-{key}")
    if os.path.exists(os.path.join(root, ".docker-check-complete")):
        log(f"runtime base: cached {os.path.relpath(root, REPO)}")
        return root, key
    shutil.rmtree(root, ignore_errors=True)
    if shutil.which("debootstrap") is None:
        fail("debootstrap is not installed (make docker-check installs it)")
    log(f"runtime base: debootstrap --variant=minbase {suite} from {mirror}")
    started = time.monotonic()
    run(["debootstrap", "--variant=minbase", suite, root, mirror], 1800, stdout=subprocess.DEVNULL)
    # As the image: its sources in deb822 form, no downloaded packages, no apt lists.
    os.remove(os.path.join(root, "etc/apt/sources.list"))
    with open(os.path.join(root, "etc/apt/sources.list.d/debian.sources"), "w") as sources:
        sources.write("\n".join("\n".join(f"{k}: {v}" for k, v in s.items()) + "\n" for s in stanzas))
    for leftover in glob.glob(os.path.join(root, "var/cache/apt/archives/*.deb")):
        os.remove(leftover)
    open(os.path.join(root, ".docker-check-complete"), "w").close()
    log(f"runtime base: done in {time.monotonic() - started:.0f} s")
    return root, key


def runtime_stage(stage, build_path, patterns):
    """The runtime image as a directory, plus what running it needs (user, environment, commands)."""
    base, base_key = base_root(stage.base)
    image = {"user": None, "env": {"PATH": DOCKER_PATH}, "cmd": None, "healthcheck": None, "expose": []}
    instructions = list(stage.instructions)
    # Docker's layer cache, in short: the RUN/ENV lines before the first COPY are kept while they
    # and the base stay the same.
    prefix = []
    while instructions and instructions[0].keyword in ("RUN", "ENV"):
        prefix.append(instructions.pop(0))
    key = hashlib.sha256((base_key + repr(prefix)).encode()).hexdigest()[:12]
    layer = os.path.join(WORK, f"layer-{key}")
    if not os.path.exists(os.path.join(layer, ".docker-check-complete")):
        for old in glob.glob(os.path.join(WORK, "layer-*")):
            shutil.rmtree(old)
        run(["cp", "-a", base, layer], 600)
        os.remove(os.path.join(layer, ".docker-check-complete"))
        apply(layer, prefix, image, build_path, patterns)
        open(os.path.join(layer, ".docker-check-complete"), "w").close()
    else:
        log(f"runtime stage: cached {os.path.relpath(layer, REPO)} ({len(prefix)} instruction(s))")
        for instruction in prefix:
            if instruction.keyword == "ENV":
                image["env"].update(parse_env(instruction.arguments))
    root = os.path.join(WORK, "image")
    shutil.rmtree(root, ignore_errors=True)
    run(["cp", "-a", layer, root], 600)
    os.remove(os.path.join(root, ".docker-check-complete"))
    apply(root, instructions, image, build_path, patterns)
    return root, image


def apply(root, instructions, image, build_path, patterns):
    for instruction in instructions:
        keyword, arguments = instruction.keyword, instruction.arguments
        if keyword == "RUN":
            log(f"runtime stage (chroot): {arguments[:100]}{'...' if len(arguments) > 100 else ''}")
            # Docker gives RUN the host's resolv.conf.
            shutil.copy("/etc/resolv.conf", os.path.join(root, "etc/resolv.conf"))
            chroot_run(root, ["/bin/sh", "-c", arguments], user=image["user"],
                       environment=dict(image["env"], HOME="/root"))
        elif keyword == "COPY":
            flags, rest = flags_and_rest(arguments)
            if set(flags) - {"from"}:
                fail(f"line {instruction.line}: COPY flags {flags} are not modelled by docker-check")
            *sources, destination = shlex.split(rest)
            target = os.path.join(root, destination.lstrip("/"))
            for source in sources:
                if "from" in flags:
                    path = build_path(source)
                    if not os.path.exists(path):
                        fail(f"line {instruction.line}: the build stage made no {source}")
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    (shutil.copytree if os.path.isdir(path) else shutil.copy2)(path, target)
                else:
                    copy_from_context(source, target + ("/" if destination.endswith("/") else ""), patterns)
        elif keyword == "ENV":
            image["env"].update(parse_env(arguments))
        elif keyword == "USER":
            image["user"] = numeric_user(root, arguments)
        elif keyword == "HEALTHCHECK":
            flags, rest = flags_and_rest(arguments)
            if not rest.startswith("CMD "):
                fail(f"line {instruction.line}: HEALTHCHECK without CMD")
            image["healthcheck"] = exec_or_shell(rest[4:].strip())
        elif keyword == "CMD":
            image["cmd"] = exec_or_shell(arguments)
        elif keyword == "EXPOSE":
            image["expose"] += [int(port.split("/")[0]) for port in arguments.split()]
        elif keyword in ("VOLUME", "LABEL"):
            pass  # no effect on a run without an engine
        else:
            fail(f"line {instruction.line}: {keyword} in the runtime stage is not modelled by docker-check")


def numeric_user(root, spec):
    """`USER name[:group]` as uid:gid, looked up in the image's own /etc/passwd and /etc/group."""
    user, _, group = spec.partition(":")
    passwd = [line.split(":") for line in open(os.path.join(root, "etc/passwd"))]
    groups = [line.split(":") for line in open(os.path.join(root, "etc/group"))]
    entry = next((e for e in passwd if user in (e[0], e[2])), None)
    uid = entry[2] if entry else user
    if not uid.isdigit():
        fail(f"USER {spec}: no such user in the image")
    if group:
        found = next((g for g in groups if group in (g[0], g[2])), None)
        gid = found[2] if found else group
    else:
        gid = entry[3] if entry else "0"
    if not gid.isdigit():
        fail(f"USER {spec}: no such group in the image")
    return f"{uid}:{gid}"


# MARK: - Stage 3: running the image

def is_stripped(path):
    """True when the ELF file has no .symtab section."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        fail(f"{path} is not a 64-bit ELF file")
    little = "little" if data[5] == 1 else "big"
    number = lambda offset, size: int.from_bytes(data[offset:offset + size], little)
    section_offset, section_size, count, names_index = number(0x28, 8), number(0x3A, 2), number(0x3C, 2), number(0x3E, 2)
    names = number(section_offset + names_index * section_size + 0x18, 8)
    for index in range(count):
        header = section_offset + index * section_size
        start = names + number(header, 4)
        name = data[start:data.index(b"\0", start)]
        if name == b".symtab":
            return False
    return True


def host_children(pid):
    children = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as file:
            children += [int(child) for child in file.read().split()]
    return children


def run_image(root, image):
    if not image["cmd"]:
        fail("the runtime stage has no CMD")
    user = image["user"]
    if user is None or user.startswith("0:"):
        fail("the image runs as root: the Dockerfile must name a non-root USER")
    port = int(image["env"].get("PARLEY_PORT", "8080"))
    if image["expose"] and port not in image["expose"]:
        fail(f"EXPOSE {image['expose']} does not include PARLEY_PORT {port}")
    binary = os.path.join(root, image["cmd"][0].lstrip("/"))
    if not is_stripped(binary):
        fail(f"{image['cmd'][0]} still has its symbol table (strip it in the build stage)")
    log(f"image: {image['cmd'][0]} is stripped ({os.path.getsize(binary) // (1 << 20)} MiB)")
    environment = dict(image["env"], HOME=home_of(root, user), HOSTNAME="docker-check")
    check_unwritable_volume(root, image, user, environment)
    check_team_mode_needs_an_admin(root, image, user, environment)
    # `docker run -e PARLEY_ADMIN_USER=… -e PARLEY_ADMIN_PASSWORD=…`: the first admin of the team.
    environment.update(PARLEY_ADMIN_USER=ADMIN[0], PARLEY_ADMIN_PASSWORD=ADMIN[1])
    env = ["env", "-i"] + [f"{k}={v}" for k, v in environment.items()]

    logs = os.path.join(WORK, "logs")
    os.makedirs(logs, exist_ok=True)
    stdout_path, stderr_path = os.path.join(logs, "parley.out"), os.path.join(logs, "parley.err")
    # PID 1 of new PID, network and mount namespaces, loopback up, /proc of its own: a container.
    script = 'ip link set lo up && mount --rbind /dev "$1/dev" && shift && exec chroot "$@"'
    command = (["unshare", "--pid", "--fork", "--kill-child", "--net", "--mount", "--propagation", "private",
                f"--mount-proc={root}/proc", "--", "/bin/sh", "-c", script, "sh", root,
                f"--userspec={user}", root] + env + image["cmd"])
    log(f"run: {shlex.join(image['cmd'])} as {user} in a chroot, PID 1 of its own namespaces")
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        container = subprocess.Popen(command, stdout=out, stderr=err)
    parley_pid = None
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and container.poll() is None:
            if "listening on" in open(stdout_path).read():
                break
            time.sleep(0.1)
        if "listening on" not in open(stdout_path).read():
            fail(f"parley did not print its listening line within 30 s: {open(stderr_path).read().strip()[-500:]}")
        line = open(stdout_path).read().strip()
        log(f"run: {line}")
        parley_pid = next(iter(host_children(container.pid)), None)
        if parley_pid is None:
            fail("cannot find the parley process")
        status = open(f"/proc/{parley_pid}/status").read()
        if not re.search(r"^NSpid:\s+\d+\s+1$", status, re.M):
            fail("parley is not PID 1 of its namespace")

        network = ["nsenter", f"--target={parley_pid}", "--net", "--"]
        run(network + [sys.executable, os.path.abspath(__file__), "probe", f"http://127.0.0.1:{port}"], 120)
        # `docker exec`: every namespace of the container, then its root, user and environment.
        inside = ["nsenter", f"--target={parley_pid}", "--net", "--mount", "--pid", "--"]

        # The HEALTHCHECK command, as `docker` runs it: in the container, as its user, with its env.
        if not image["healthcheck"]:
            fail("the runtime stage has no HEALTHCHECK")
        run(inside + ["chroot", f"--userspec={user}", root] + env + image["healthcheck"], 30)
        log(f"HEALTHCHECK {shlex.join(image['healthcheck'])}: exit 0")

        # `docker exec CONTAINER parley backup FILE` beside the running server.
        database = environment.get("PARLEY_DB", "/data/parley.db")
        copy = os.path.join(os.path.dirname(database), "docker-check-backup.db")
        run(inside + ["chroot", f"--userspec={user}", root] + env + [image["cmd"][0], "backup", "--force", copy], 60)
        if not os.path.getsize(os.path.join(root, copy.lstrip("/"))):
            fail(f"parley backup wrote an empty {copy}")
        log(f"parley backup {copy}: exit 0")

        # `docker stop`: SIGTERM from outside the container to its PID 1, which must exit 0.
        os.kill(parley_pid, signal.SIGTERM)
        try:
            code = container.wait(timeout=20)
        except subprocess.TimeoutExpired:
            fail("parley did not exit within 20 s of SIGTERM")
        if code != 0:
            fail(f"parley exited {code} after SIGTERM: {open(stderr_path).read().strip()[-500:]}")
        log("SIGTERM to PID 1: exit 0")
    finally:
        if container.poll() is None:
            container.kill()  # its PID namespace ends with it, and its mounts with its mount namespace
            container.wait(timeout=20)


# The first admin, given as `docker run -e` would.
ADMIN = ("admin", "docker-check passphrase")


def start_expecting_exit(root, image, user, environment, database, what):
    """Runs CMD once in the chroot as the image's user with `database`, expecting it to stop by
    itself within 30 s; returns the finished process."""
    settings = dict(environment, PARLEY_DB=database, PARLEY_PORT="0")
    command = (["chroot", f"--userspec={user}", root, "env", "-i"]
               + [f"{k}={v}" for k, v in settings.items()] + image["cmd"])
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        fail(f"parley {what} did not stop within 30 s")


def check_team_mode_needs_an_admin(root, image, user, environment):
    """The image listens on 0.0.0.0, so it runs in team mode: without a first admin it must refuse to
    start (exit 2) and say how to make one."""
    database = "/data/docker-check-no-admin.db"
    try:
        result = start_expecting_exit(root, image, user, environment, database, "in team mode without an admin")
    finally:
        for suffix in ("", "-wal", "-shm"):
            path = os.path.join(root, database.lstrip("/") + suffix)
            if os.path.exists(path):
                os.remove(path)
    if result.returncode != 2 or "PARLEY_ADMIN_USER" not in result.stderr:
        fail(f"team mode without an admin exited {result.returncode}: {result.stderr.strip()[-300:]}")
    log(f"team mode without an admin: exit 2, {result.stderr.strip().splitlines()[-1][:120]}")


def check_unwritable_volume(root, image, user, environment):
    """A root-owned bind mount as the volume: parley must stop at once and name the file."""
    volume = os.path.join(root, "mnt/root-owned")
    os.makedirs(volume, exist_ok=True)
    os.chown(volume, 0, 0)
    os.chmod(volume, 0o755)
    database = "/mnt/root-owned/parley.db"
    result = start_expecting_exit(root, image, user, environment, database, f"with the unwritable {database}")
    if result.returncode == 0 or f"cannot open the database {database}" not in result.stderr:
        fail(f"parley with the unwritable {database} exited {result.returncode}: {result.stderr.strip()[-300:]}")
    log(f"root-owned volume: exit {result.returncode}, {result.stderr.strip().splitlines()[-1][:160]}")


def home_of(root, user):
    uid = user.split(":")[0]
    for line in open(os.path.join(root, "etc/passwd")):
        fields = line.split(":")
        if fields[2] == uid:
            return fields[5]
    return "/"


# MARK: - The probe (runs inside the container's network namespace)

def probe(base):
    """The page, /api/health and a streamed demo reply, as a user would see them."""
    session = {}

    def request(method, path, body=None, timeout=20, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else None
        headers = dict(headers or ({"Content-Type": "application/json"} if data else {}))
        headers.update(session)
        reply = urllib.request.urlopen(urllib.request.Request(base + path, data=data, method=method,
                                                              headers=headers), timeout=timeout)
        return reply.status, reply.read().decode(), reply.headers

    deadline = time.monotonic() + 30
    while True:
        try:
            status, text, _ = request("GET", "/api/health", timeout=5)
            break
        except OSError as error:
            if time.monotonic() > deadline:
                fail(f"GET /api/health: {error}")
            time.sleep(0.2)
    if status != 200 or json.loads(text) != {"status": "ok"}:
        fail(f"GET /api/health answered {status} {text[:200]}")
    log("GET /api/health: 200 {\"status\":\"ok\"}")

    status, page, _ = request("GET", "/")
    if status != 200 or "<html" not in page.lower():
        fail(f"GET / answered {status} without a page")
    log("GET /: the page")

    # Team mode: nothing without signing in, then everything with the session cookie.
    try:
        request("GET", "/api/conversations")
        fail("GET /api/conversations answered without a session in team mode")
    except urllib.error.HTTPError as error:
        if error.code != 401:
            fail(f"GET /api/conversations without a session answered {error.code}, not 401")
    status, text, headers = request("POST", "/api/auth/login", {"username": ADMIN[0], "password": ADMIN[1]})
    cookie = (headers.get("Set-Cookie") or "").split(";")[0]
    if status != 200 or not cookie.startswith("parley_session="):
        fail(f"sign-in as the first admin answered {status} without a session cookie")
    session["Cookie"] = cookie
    log(f"team mode: 401 without a session; signed in as {ADMIN[0]}")

    status, text, _ = request("POST", "/api/conversations", {"title": "docker-check"})
    conversation = json.loads(text)["id"]
    status, text, _ = request("POST", f"/api/conversations/{conversation}/messages", {"content": "Hello from docker-check"})
    assistant = json.loads(text)["assistant_message"]["id"]
    reply = urllib.request.urlopen(urllib.request.Request(f"{base}/api/messages/{assistant}/stream?mode=text",
                                                          headers=session), timeout=60)
    events, event, answer = [], None, ""
    for raw in reply:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("event:"):
            event = line[6:].strip()
            events.append(event)
        elif line.startswith("data:") and event == "delta":
            answer += json.loads(line[5:])["text"]
        elif line.startswith("data:") and event == "done":
            done = json.loads(line[5:])
            break
    else:
        fail(f"the demo reply's stream ended without done (events: {events[:10]})")
    if done.get("status") != "complete" or not answer:
        fail(f"the demo reply ended {done.get('status')} with {len(answer)} characters")
    log(f"demo reply: streamed {len(answer)} characters in {events.count('delta')} deltas, status complete")

    # An image upload: decoded by `parley-media-worker` beside `parley`, with the image's libvips.
    status, text, _ = request("POST", "/api/files?filename=docker-check.png", tiny_png(),
                              headers={"Content-Type": "application/octet-stream"})
    media = json.loads(text)
    if status != 201 or media.get("media_type") != "image/png" or media.get("width") != 16:
        fail(f"an image upload answered {status} {text[:300]}")
    log("image upload: 201, decoded by parley-media-worker")


def tiny_png():
    """A 16x16 RGB PNG, written here (zlib and CRC-32 from the standard library)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes(value for x in range(16) for value in (x * 16, y * 16, 128)) for y in range(16))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


# MARK: - Main

def main():
    if len(sys.argv) == 3 and sys.argv[1] == "probe":
        probe(sys.argv[2])
        return
    if os.geteuid() != 0:
        fail("needs root (debootstrap, chroot and namespaces); run it with sudo")
    started = time.monotonic()
    os.makedirs(WORK, exist_ok=True)
    stages = parse_dockerfile(open(os.path.join(REPO, "Dockerfile")).read())
    if len(stages) != 2:
        fail(f"the Dockerfile has {len(stages)} stages; the check models a build stage and a runtime stage")
    build, runtime = stages
    from compose_check import check_compose
    nodes = check_compose(REPO, runtime, parse_env, apt_packages, fail)
    log(f"docker-compose.yml: {nodes} nodes on postgres:15 and redis:7 behind nginx, consistent with the Dockerfile and README")
    for instruction in runtime.instructions:
        flags, _ = flags_and_rest(instruction.arguments)
        if instruction.keyword == "COPY" and "from" in flags and flags["from"] not in (build.name, "0"):
            fail(f"line {instruction.line}: COPY --from={flags['from']} names no stage")
    patterns = ignore_patterns()
    build_path = build_stage(build, patterns)
    root, image = runtime_stage(runtime, build_path, patterns)
    run_image(root, image)
    log(f"OK in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    try:
        main()
    except CheckFailure as failure:
        print(f"docker-check: FAIL: {failure}", file=sys.stderr, flush=True)
        sys.exit(1)
