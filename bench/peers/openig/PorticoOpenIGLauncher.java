/*
 * Benchmark-only launcher for OpenIG 6.x (OpenIdentityPlatform), written for Portico's bench harness.
 *
 * The OpenIG WAR is not published on Maven Central (it ships as a GitHub release asset), so
 * bench/peers/openig.sh assembles the same libraries the WAR bundles from their Maven Central
 * artifacts and runs them in an embedded Tomcat. This class plays the part of the WAR's servlet
 * container initializer: it reads ${openig.base}/config/admin.json and config.json, builds OpenIG's
 * public GatewayHttpApplication and AdminHttpApplication, and mounts each behind the http-framework's
 * HttpFrameworkServlet ("/*" for the gateway, "/<prefix>/*" for the admin endpoints).
 *
 * Usage: java -Dopenig.base=DIR -cp 'lib/*:classes' PorticoOpenIGLauncher <port> [address]
 */

import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Locale;

import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.startup.Tomcat;
import org.apache.catalina.util.ServerInfo;
import org.forgerock.http.Handler;
import org.forgerock.http.HttpApplication;
import org.forgerock.http.HttpApplicationException;
import org.forgerock.http.io.Buffer;
import org.forgerock.http.servlet.HttpFrameworkServlet;
import org.forgerock.json.JsonValue;
import org.forgerock.openig.config.Environment;
import org.forgerock.openig.http.AdminHttpApplication;
import org.forgerock.openig.http.GatewayEnvironment;
import org.forgerock.openig.http.GatewayHttpApplication;
import org.forgerock.openig.http.RunMode;
import org.forgerock.openig.util.JsonValues;
import org.forgerock.util.Factory;

public final class PorticoOpenIGLauncher {

    /** Used only when the instance has no config/config.json: a Router over config/routes. */
    private static final String FALLBACK_CONFIG = "{ \"handler\": { \"type\": \"Router\" } }";

    private PorticoOpenIGLauncher() {
    }

    public static void main(final String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            System.err.println("[portico-openig-launcher] OpenIG failed to start");
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(final String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: PorticoOpenIGLauncher <port> [address]");
            System.exit(2);
        }
        final int port = Integer.parseInt(args[0]);
        final String address = args.length > 1 ? args[1] : "127.0.0.1";
        final long t0 = System.nanoTime();

        final Environment env = new GatewayEnvironment();
        final File configDir = env.getConfigDirectory();
        log("OpenIG " + openigVersion() + " on " + ServerInfo.getServerInfo() + ", Java "
                + System.getProperty("java.version"));
        log("base directory " + env.getBaseDirectory().getAbsolutePath());

        final JsonValue adminConfig = readConfig(new File(configDir, "admin.json"), "{ \"prefix\": \"openig\" }");
        final String modeName = adminConfig.get("mode").as(JsonValues.evaluated()).defaultTo("EVALUATION").asString();
        final RunMode mode = RunMode.valueOf(modeName.toUpperCase(Locale.ROOT));
        final String prefix = adminConfig.get("prefix").defaultTo("openig").asString();
        final AdminHttpApplication admin = new AdminHttpApplication(prefix, adminConfig, env, mode);

        log("admin application built");
        final JsonValue gatewayConfig = readConfig(new File(configDir, "config.json"), FALLBACK_CONFIG);
        final GatewayHttpApplication gateway =
                new GatewayHttpApplication(env, gatewayConfig, admin.getEndpointRegistry(), mode);

        final File work = new File(System.getProperty("portico.tomcat.dir",
                new File(System.getProperty("java.io.tmpdir"), "portico-openig-tomcat-" + port).getPath()));
        work.mkdirs();

        final Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(work.getAbsolutePath());
        final Connector connector = new Connector("HTTP/1.1");
        connector.setPort(port);
        connector.setProperty("address", address);
        final String maxThreads = System.getProperty("portico.tomcat.maxThreads");
        if (maxThreads != null) {
            connector.setProperty("maxThreads", maxThreads);
        }
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);

        final Context ctx = tomcat.addContext("", work.getAbsolutePath());
        // A gateway whose heap cannot be built (bad config.json or route) must fail the start, not answer 500s.
        ((StandardContext) ctx).setFailCtxIfServletStartFails(true);
        final StartWatch watchedGateway = new StartWatch(gateway);
        final Wrapper gw = Tomcat.addServlet(ctx, "Gateway", new HttpFrameworkServlet(watchedGateway));
        gw.setAsyncSupported(true);
        gw.setLoadOnStartup(1);
        ctx.addServletMappingDecoded("/*", "Gateway");
        final Wrapper adm = Tomcat.addServlet(ctx, "Admin", new HttpFrameworkServlet(admin));
        adm.setAsyncSupported(true);
        adm.setLoadOnStartup(1);
        ctx.addServletMappingDecoded("/" + prefix + "/*", "Admin");

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (Exception e) {
                // shutting down anyway
            }
        }, "portico-openig-shutdown"));

        log("starting Tomcat (the gateway heap, including the Router's routes, is built in servlet init)");
        tomcat.start();
        if (watchedGateway.failure != null) {
            // HttpFrameworkServlet only logs a failed start and then answers every request with an error.
            throw new IllegalStateException("the gateway (config.json / routes) failed to start",
                    watchedGateway.failure);
        }
        if (!ctx.getState().isAvailable() || connector.getLocalPort() <= 0) {
            throw new IllegalStateException("Tomcat context state " + ctx.getState()
                    + ", connector state " + connector.getState() + " (see the errors above)");
        }
        log(String.format("listening on http://%s:%d (mode %s, admin prefix /%s); %d ms in main()",
                address, port, mode, prefix, (System.nanoTime() - t0) / 1_000_000));
        tomcat.getServer().await();
    }

    /** Delegates to the gateway application and remembers whether its start failed. */
    private static final class StartWatch implements HttpApplication {
        private final HttpApplication delegate;
        private volatile Throwable failure;

        StartWatch(final HttpApplication delegate) {
            this.delegate = delegate;
        }

        @Override
        public Handler start() throws HttpApplicationException {
            try {
                return delegate.start();
            } catch (HttpApplicationException | RuntimeException | Error e) {
                failure = e;
                throw e;
            }
        }

        @Override
        public Factory<Buffer> getBufferFactory() {
            return delegate.getBufferFactory();
        }

        @Override
        public void stop() {
            delegate.stop();
        }
    }

    private static JsonValue readConfig(final File file, final String fallback) throws Exception {
        if (file.canRead()) {
            log("reading " + file.getAbsolutePath());
            return JsonValues.readJson(file.toURI().toURL());
        }
        log(file.getAbsolutePath() + " not readable, using built-in " + fallback);
        final File tmp = File.createTempFile("openig-fallback", ".json");
        tmp.deleteOnExit();
        Files.write(tmp.toPath(), fallback.getBytes(StandardCharsets.UTF_8));
        final URL url = tmp.toURI().toURL();
        return JsonValues.readJson(url);
    }

    private static String openigVersion() {
        final Package p = GatewayHttpApplication.class.getPackage();
        final String v = p == null ? null : p.getImplementationVersion();
        return v != null ? v : System.getProperty("portico.openig.version", "unknown");
    }

    private static void log(final String msg) {
        System.out.println("[portico-openig-launcher +" + ManagementFactory.getRuntimeMXBean().getUptime()
                + "ms] " + msg);
        System.out.flush();
    }
}
