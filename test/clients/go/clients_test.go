// testcontainers-go against the engine DOCKER_HOST names: berth serve or podman's service. Run by
// test/e2e/serve/testcontainers-go.test.ts once per engine (`go test`). BERTH_TC_ENGINE says which (podman 4.3 runs
// no healthchecks here and has no Ryuk image without a registry); BERTH_TC_IMAGE is the busybox image both engines
// hold; every container carries the label suite=BERTH_TC_SUITE.
package clients

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

const httpd = "mkdir -p /www && echo served > /www/index.html && exec httpd -f -p 8080 -h /www"

var (
	image  = os.Getenv("BERTH_TC_IMAGE")
	engine = os.Getenv("BERTH_TC_ENGINE")
	suite  = os.Getenv("BERTH_TC_SUITE")
)

func busybox(t *testing.T, script string, opts ...testcontainers.ContainerCustomizer) *testcontainers.DockerContainer {
	t.Helper()
	all := append([]testcontainers.ContainerCustomizer{
		testcontainers.WithCmd("sh", "-c", script),
		testcontainers.WithLabels(map[string]string{"suite": suite}),
	}, opts...)
	c, err := testcontainers.Run(context.Background(), image, all...)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return c
}

func execOutput(t *testing.T, c *testcontainers.DockerContainer, cmd ...string) (int, string) {
	t.Helper()
	code, out, err := c.Exec(context.Background(), cmd, tcexec.Multiplexed())
	if err != nil {
		t.Fatalf("exec %v: %v", cmd, err)
	}
	b, err := io.ReadAll(out)
	if err != nil {
		t.Fatalf("exec %v output: %v", cmd, err)
	}
	return code, string(b)
}

func TestLogWaitAndLogs(t *testing.T) {
	c := busybox(t, "echo out1; echo err1 >&2; echo ready; exec sleep 600", testcontainers.WithWaitStrategy(wait.ForLog("ready").WithStartupTimeout(2*time.Minute)))
	r, err := c.Logs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	for _, want := range []string{"out1\n", "err1\n", "ready\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("logs %q lack %q", b, want)
		}
	}
}

func TestHTTPWaitAndAnExposedPort(t *testing.T) {
	c := busybox(t, httpd, testcontainers.WithExposedPorts("8080/tcp"),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/index.html").WithPort("8080/tcp").WithStatusCodeMatcher(func(s int) bool { return s == 200 }).WithStartupTimeout(2*time.Minute)))
	endpoint, err := c.PortEndpoint(context.Background(), "8080/tcp", "http")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(endpoint + "/index.html")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "served\n" {
		t.Errorf("got %q", b)
	}
}

func TestListeningPortWait(t *testing.T) {
	c := busybox(t, httpd, testcontainers.WithExposedPorts("8080/tcp"), testcontainers.WithWaitStrategy(wait.ForListeningPort("8080/tcp").WithStartupTimeout(2*time.Minute)))
	if !c.IsRunning() {
		t.Error("not running")
	}
}

func TestHealthCheckWait(t *testing.T) {
	if engine == "podman" {
		t.Skip("podman 4.3 runs no healthchecks without systemd: its containers stay starting")
	}
	c := busybox(t, "touch /tmp/ok; exec sleep 600",
		testcontainers.WithConfigModifier(func(cfg *containerConfig) {
			cfg.Healthcheck = &healthConfig{Test: []string{"CMD", "test", "-f", "/tmp/ok"}, Interval: time.Second, Retries: 30}
		}),
		testcontainers.WithWaitStrategy(wait.ForHealthCheck().WithStartupTimeout(2*time.Minute)))
	state, err := c.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if state.Health == nil || state.Health.Status != "healthy" {
		t.Errorf("health %+v", state.Health)
	}
}

func TestExecWithExitCodesAndOutput(t *testing.T) {
	c := busybox(t, "echo started; exec sleep 600", testcontainers.WithWaitStrategy(wait.ForLog("started").WithStartupTimeout(2*time.Minute)))
	code, out := execOutput(t, c, "sh", "-c", "echo hello; echo oops >&2")
	if code != 0 || strings.ReplaceAll(out, "oops\n", "") != "hello\n" {
		t.Errorf("exec: %d %q", code, out)
	}
	if code, _ := execOutput(t, c, "sh", "-c", "exit 7"); code != 7 {
		t.Errorf("exit code %d", code)
	}
}

func TestCopyIntoAndOutOfAContainer(t *testing.T) {
	c := busybox(t, "echo started; exec sleep 600",
		testcontainers.WithFiles(testcontainers.ContainerFile{Reader: strings.NewReader("a file from the test\n"), ContainerFilePath: "/tmp/before.txt", FileMode: 0o644}),
		testcontainers.WithWaitStrategy(wait.ForLog("started").WithStartupTimeout(2*time.Minute)))
	if _, out := execOutput(t, c, "cat", "/tmp/before.txt"); out != "a file from the test\n" {
		t.Errorf("before start: %q", out)
	}
	if err := c.CopyToContainer(context.Background(), []byte("later\n"), "/tmp/after.txt", 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out := execOutput(t, c, "cat", "/tmp/after.txt"); out != "later\n" {
		t.Errorf("after start: %q", out)
	}
	execOutput(t, c, "sh", "-c", "echo made inside > /tmp/out.txt")
	r, err := c.CopyFileFromContainer(context.Background(), "/tmp/out.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, _ := io.ReadAll(r); string(b) != "made inside\n" {
		t.Errorf("copied out: %q", b)
	}
}

func TestANetworkWithAliasesBetweenTwoContainers(t *testing.T) {
	ctx := context.Background()
	nw, err := network.New(ctx, network.WithLabels(map[string]string{"suite": suite}))
	if err != nil {
		t.Fatal(err)
	}
	testcontainers.CleanupNetwork(t, nw)
	busybox(t, httpd, network.WithNetwork([]string{"web"}, nw), testcontainers.WithWaitStrategy(wait.ForLog("").WithStartupTimeout(2*time.Minute)))
	client := busybox(t, "echo started; exec sleep 600", network.WithNetwork(nil, nw), testcontainers.WithWaitStrategy(wait.ForLog("started").WithStartupTimeout(2*time.Minute)))
	var out string
	// podman's DNS learns a new name a moment later; berth's answers at once
	for i := 0; i < 20; i++ {
		var code int
		if code, out = execOutput(t, client, "wget", "-qO-", "http://web:8080/index.html"); code == 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if out != "served\n" {
		t.Errorf("through the alias: %q", out)
	}
}

func TestReuseByName(t *testing.T) {
	name := "tcgo-reuse-" + suite
	first := busybox(t, "echo started; exec sleep 600", testcontainers.WithReuseByName(name), testcontainers.WithWaitStrategy(wait.ForLog("started").WithStartupTimeout(2*time.Minute)))
	second := busybox(t, "echo started; exec sleep 600", testcontainers.WithReuseByName(name), testcontainers.WithWaitStrategy(wait.ForLog("started").WithStartupTimeout(2*time.Minute)))
	if first.GetContainerID() != second.GetContainerID() {
		t.Errorf("two containers: %s and %s", first.GetContainerID(), second.GetContainerID())
	}
}
