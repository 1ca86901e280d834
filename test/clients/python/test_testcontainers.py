"""testcontainers-python (PyPI, with docker-py 7) against the engine DOCKER_HOST names: berth serve or podman's service.

Run by test/e2e/serve/testcontainers-python.test.ts once per engine, as a user's suite runs: pytest, DOCKER_HOST.
BERTH_TC_ENGINE says which engine it is (podman 4.3 runs no healthchecks here, and has no Ryuk image without a
registry); BERTH_TC_SPLIT_LOGS=1 when the cluster serves stdout and stderr apart (a stock one does not: berth then
delivers both as stdout, see docs/serve.md). BERTH_TC_IMAGE is the busybox image both engines hold.
"""
import os
import subprocess
import sys
import time
import urllib.request

import docker
import pytest
from testcontainers.core.container import DockerContainer
from testcontainers.core.network import Network
from testcontainers.core.wait_strategies import (
    HealthcheckWaitStrategy,
    HttpWaitStrategy,
    LogMessageWaitStrategy,
    PortWaitStrategy,
)

IMAGE = os.environ['BERTH_TC_IMAGE']
ENGINE = os.environ['BERTH_TC_ENGINE']
SPLIT_LOGS = os.environ.get('BERTH_TC_SPLIT_LOGS') == '1'
SUITE = os.environ['BERTH_TC_SUITE']
HTTPD = 'mkdir -p /www && echo served > /www/index.html && exec httpd -f -p 8080 -h /www'


def busybox(script):
    return DockerContainer(IMAGE).with_command(['sh', '-c', script]).with_kwargs(labels={'suite': SUITE})


def test_log_wait_and_logs_apart():
    with busybox('echo out1; echo err1 >&2; echo ready; exec sleep 600').waiting_for(LogMessageWaitStrategy('ready').with_startup_timeout(120)) as c:
        stdout, stderr = c.get_logs()
        if SPLIT_LOGS or ENGINE == 'podman':
            assert stdout == b'out1\nready\n'
            assert stderr == b'err1\n'
        else:
            # a stock cluster serves one merged log: both streams arrive as stdout, in the order written
            assert stdout.replace(b'err1\n', b'') == b'out1\nready\n'
            assert b'err1\n' in stdout + stderr


def test_http_wait_and_an_exposed_port():
    with busybox(HTTPD).with_exposed_ports(8080).waiting_for(HttpWaitStrategy(8080).for_status_code(200).with_startup_timeout(120)) as c:
        host, port = c.get_container_host_ip(), c.get_exposed_port(8080)
        with urllib.request.urlopen(f'http://{host}:{port}/index.html', timeout=10) as r:
            assert r.read() == b'served\n'


def test_port_wait():
    with busybox('exec httpd -f -p 9000 -h /tmp').with_exposed_ports(9000).waiting_for(PortWaitStrategy(9000).with_startup_timeout(120)) as c:
        assert c.status == 'running'


@pytest.mark.skipif(ENGINE == 'podman', reason='podman 4.3 runs no healthchecks without systemd: its containers stay starting')
def test_health_check_wait():
    healthy = busybox('touch /tmp/ok; exec sleep 600').with_kwargs(
        labels={'suite': SUITE},
        healthcheck={'test': ['CMD', 'test', '-f', '/tmp/ok'], 'interval': 1_000_000_000, 'retries': 30},
    )
    with healthy.waiting_for(HealthcheckWaitStrategy().with_startup_timeout(120)) as c:
        assert c.get_wrapped_container().attrs['State']['Health']['Status'] == 'healthy'


def test_exec_with_exit_codes_and_output():
    with busybox('echo started; exec sleep 600').waiting_for(LogMessageWaitStrategy('started').with_startup_timeout(120)) as c:
        ok = c.exec(['sh', '-c', 'echo hello; echo oops >&2'])
        assert ok.exit_code == 0
        assert ok.output.replace(b'oops\n', b'') == b'hello\n'
        assert c.exec(['sh', '-c', 'exit 7']).exit_code == 7


def test_copy_into_and_out_of_a_container(tmp_path):
    content = b'a file from the test\n'
    container = (
        busybox('echo started; exec sleep 600')
        .with_copy_into_container(content, '/tmp/before.txt')
        .waiting_for(LogMessageWaitStrategy('started').with_startup_timeout(120))
    )
    with container as c:
        assert c.exec(['cat', '/tmp/before.txt']).output == content
        c.copy_into_container(b'later\n', '/tmp/after.txt')
        assert c.exec(['cat', '/tmp/after.txt']).output == b'later\n'
        c.exec(['sh', '-c', 'echo made inside > /tmp/out.txt'])
        dest = tmp_path / 'out.txt'
        c.copy_from_container('/tmp/out.txt', dest)
        assert dest.read_bytes() == b'made inside\n'


def test_a_network_with_aliases_between_two_containers():
    with Network() as net:
        web = busybox('echo serving; ' + HTTPD).with_network(net).with_network_aliases('web')
        with web.waiting_for(LogMessageWaitStrategy('serving').with_startup_timeout(120)):
            client = busybox('echo started; exec sleep 600').with_network(net).waiting_for(LogMessageWaitStrategy('started').with_startup_timeout(120))
            with client as c:
                # podman's DNS learns a new name a moment later; berth's answers at once
                for _ in range(20):
                    got = c.exec(['wget', '-qO-', 'http://web:8080/index.html'])
                    if got.exit_code == 0:
                        break
                    time.sleep(0.5)
                assert got.output == b'served\n'


@pytest.mark.skipif(ENGINE == 'podman', reason='podman has no testcontainers/ryuk image here: no registry to pull it from')
def test_ryuk_removes_what_a_killed_session_left():
    # testcontainers-python removes its Ryuk itself when its process exits normally (atexit): Ryuk is for the session
    # that cannot, one killed. This one starts a container and is killed with SIGKILL; Ryuk removes the container.
    script = f"""
import time
from testcontainers.core.container import DockerContainer
c = DockerContainer({IMAGE!r}).with_command(['sleep', '600']).with_kwargs(labels={{'suite': {SUITE!r}, 'killed-session': {SUITE!r}}}).start()
print(c.get_container_id(), flush=True)
time.sleep(600)
"""
    env = {**os.environ, 'RYUK_RECONNECTION_TIMEOUT': '2s'}
    session = subprocess.Popen([sys.executable, '-c', script], env=env, stdout=subprocess.PIPE, text=True)
    try:
        container_id = session.stdout.readline().strip()
        assert container_id, 'the session started no container'
    finally:
        session.kill()
        session.wait()
    client = docker.from_env()
    # sparse: Ryuk may remove the container between docker-py's list and its inspect of each entry (a 404), as on dockerd
    left = lambda: client.containers.list(all=True, sparse=True, filters={'label': f'killed-session={SUITE}'})
    deadline = time.time() + 60
    while time.time() < deadline and left():
        time.sleep(1)
    assert left() == []
