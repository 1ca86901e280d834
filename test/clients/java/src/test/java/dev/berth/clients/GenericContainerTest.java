package dev.berth.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.output.OutputFrame.OutputType;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;

/**
 * testcontainers-java against the engine DOCKER_HOST names: berth serve or podman's service. Run by
 * test/e2e/serve/testcontainers-java.test.ts once per engine. BERTH_TC_ENGINE says which (podman 4.3 runs no
 * healthchecks here and has no Ryuk image without a registry); BERTH_TC_SPLIT_LOGS=1 when the cluster serves stdout
 * and stderr apart (a stock one does not: berth then delivers both as stdout); BERTH_TC_IMAGE is the busybox image
 * both engines hold; every container carries the label suite=BERTH_TC_SUITE.
 */
class GenericContainerTest {
  static final String IMAGE = System.getenv("BERTH_TC_IMAGE");
  static final String ENGINE = System.getenv("BERTH_TC_ENGINE");
  static final String SUITE = System.getenv("BERTH_TC_SUITE");
  static final boolean SPLIT_LOGS = "1".equals(System.getenv("BERTH_TC_SPLIT_LOGS"));
  static final String HTTPD = "mkdir -p /www && echo served > /www/index.html && exec httpd -f -p 8080 -h /www";

  static GenericContainer<?> busybox(String script) {
    return new GenericContainer<>(DockerImageName.parse(IMAGE))
        .withCommand("sh", "-c", script)
        .withLabel("suite", SUITE)
        .withStartupTimeout(Duration.ofMinutes(2));
  }

  @Test
  void logWaitAndLogsApart() {
    try (GenericContainer<?> c = busybox("echo out1; echo err1 >&2; echo ready; exec sleep 600").waitingFor(Wait.forLogMessage("ready\\n", 1))) {
      c.start();
      if (SPLIT_LOGS || "podman".equals(ENGINE)) {
        assertEquals("out1\nready\n", c.getLogs(OutputType.STDOUT));
        assertEquals("err1\n", c.getLogs(OutputType.STDERR));
      } else {
        // a stock cluster serves one merged log: both streams arrive as stdout, in the order written
        assertEquals("out1\nready\n", c.getLogs(OutputType.STDOUT).replace("err1\n", ""));
        assertTrue(c.getLogs().contains("err1\n"));
      }
    }
  }

  @Test
  void httpWaitAndAnExposedPort() throws Exception {
    try (GenericContainer<?> c = busybox(HTTPD).withExposedPorts(8080).waitingFor(Wait.forHttp("/index.html").forPort(8080).forStatusCode(200))) {
      c.start();
      URI uri = URI.create("http://" + c.getHost() + ":" + c.getMappedPort(8080) + "/index.html");
      HttpResponse<String> got = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals("served\n", got.body());
    }
  }

  @Test
  void listeningPortWait() {
    try (GenericContainer<?> c = busybox(HTTPD).withExposedPorts(8080).waitingFor(Wait.forListeningPort())) {
      c.start();
      assertTrue(c.isRunning());
    }
  }

  @Test
  void healthCheckWait() {
    assumeFalse("podman".equals(ENGINE), "podman 4.3 runs no healthchecks without systemd: its containers stay starting");
    try (GenericContainer<?> c = busybox("touch /tmp/ok; exec sleep 600")
        .withCreateContainerCmdModifier(cmd -> cmd.withHealthcheck(new com.github.dockerjava.api.model.HealthCheck()
            .withTest(java.util.List.of("CMD", "test", "-f", "/tmp/ok"))
            .withInterval(1_000_000_000L)
            .withRetries(30)))
        .waitingFor(Wait.forHealthcheck())) {
      c.start();
      assertTrue(c.isHealthy());
    }
  }

  @Test
  void execWithExitCodesAndOutputApart() throws Exception {
    try (GenericContainer<?> c = busybox("echo started; exec sleep 600").waitingFor(Wait.forLogMessage("started\\n", 1))) {
      c.start();
      ExecResult ok = c.execInContainer("sh", "-c", "echo hello; echo oops >&2");
      assertEquals(0, ok.getExitCode());
      assertEquals("hello\n", ok.getStdout());
      assertEquals("oops\n", ok.getStderr());
      assertEquals(7, c.execInContainer("sh", "-c", "exit 7").getExitCode());
    }
  }

  @Test
  void copyIntoAndOutOfAContainer() throws Exception {
    try (GenericContainer<?> c = busybox("echo started; exec sleep 600")
        .withCopyToContainer(Transferable.of("a file from the test\n"), "/tmp/before.txt")
        .waitingFor(Wait.forLogMessage("started\\n", 1))) {
      c.start();
      assertEquals("a file from the test\n", c.execInContainer("cat", "/tmp/before.txt").getStdout());
      c.copyFileToContainer(Transferable.of("later\n"), "/tmp/after.txt");
      assertEquals("later\n", c.execInContainer("cat", "/tmp/after.txt").getStdout());
      c.execInContainer("sh", "-c", "echo made inside > /tmp/out.txt");
      String out = c.copyFileFromContainer("/tmp/out.txt", (InputStream in) -> new String(in.readAllBytes(), StandardCharsets.UTF_8));
      assertEquals("made inside\n", out);
    }
  }

  @Test
  void aNetworkWithAliasesBetweenTwoContainers() throws Exception {
    try (Network net = Network.newNetwork();
        GenericContainer<?> web = busybox("echo serving; " + HTTPD).withNetwork(net).withNetworkAliases("web").waitingFor(Wait.forLogMessage("serving\\n", 1));
        GenericContainer<?> client = busybox("echo started; exec sleep 600").withNetwork(net).waitingFor(Wait.forLogMessage("started\\n", 1))) {
      web.start();
      client.start();
      ExecResult got = null;
      // podman's DNS learns a new name a moment later; berth's answers at once
      for (int i = 0; i < 20; i++) {
        got = client.execInContainer("wget", "-qO-", "http://web:8080/index.html");
        if (got.getExitCode() == 0) break;
        Thread.sleep(500);
      }
      assertEquals("served\n", got.getStdout());
    }
  }

  @Test
  void reuseFindsTheSameContainer() {
    GenericContainer<?> first = busybox("echo started; exec sleep 600").withReuse(true).withLabel("reuse", SUITE).waitingFor(Wait.forLogMessage("started\\n", 1));
    first.start();
    GenericContainer<?> second = busybox("echo started; exec sleep 600").withReuse(true).withLabel("reuse", SUITE).waitingFor(Wait.forLogMessage("started\\n", 1));
    second.start();
    assertEquals(first.getContainerId(), second.getContainerId());
    // a reused container outlives its session: the test's wrapper removes it by its suite label
  }

  @Test
  void ryukWatchesTheSession() {
    assumeFalse("podman".equals(ENGINE), "podman has no testcontainers/ryuk image here: no registry to pull it from");
    // a container this session never stops: Ryuk removes it once the JVM has gone (the wrapper checks)
    GenericContainer<?> left = busybox("exec sleep 600").withLabel("left-for-ryuk", SUITE);
    left.start();
    Map<String, String> labels = left.getContainerInfo().getConfig().getLabels();
    assertEquals(DockerClientFactory.SESSION_ID, labels.get("org.testcontainers.sessionId"));
  }
}
