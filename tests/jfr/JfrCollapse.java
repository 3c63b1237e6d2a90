/*
 * Collapsed stacks of the sample events of JFR files, read with the JDK's
 * own parser (jdk.jfr.consumer.RecordingFile).
 *
 * usage: java JfrCollapse.java FILE.jfr...
 *
 * For each file it prints
 *     # FILE <path>
 *     # COUNT <event type> <number of events>       (every event type seen)
 *     # LIB <name>|<baseAddress>|<topAddress>|<buildId>|<loadBias>   (jdk.NativeLibrary, unique)
 *     <event type>;<frame>;<frame>... <count>        (sample events, sorted)
 *     # END <path> <sample events> <distinct stacks>
 * Sample events are jdk.ExecutionSample and every perf.* type with a
 * stackTrace field (perf.LostSamples has none). Frames are root first (the
 * JFR stores them leaf first). A frame is
 *     <method>            when the class name is empty
 *     <class>.<method>    otherwise (RecordedClass.getName(): '/' shown as '.')
 * followed by the descriptor when the method is "<remote>" (a frame to be
 * symbolized later by build-id: the descriptor holds the ELF address; conv's
 * "(L0x<address>;)L;" written "(0x<address>)", as jfr print shows it), and
 * by ":<line>" when the line number is > 0. In names, '\' ';' CR and LF are
 * written as \\ \; \r \n, so ';' only separates frames.
 *
 * A sample event without a stack trace or thread, a frame without a method,
 * method name, class or frame type prints "# ERROR ..." and makes the exit
 * status 1; so does a file the parser rejects (the exception is printed, and
 * the next file is read). Counts are aggregated per (event type, stack).
 *
 * java --add-exports jdk.jfr/jdk.jfr.internal.tool=ALL-UNNAMED JfrCollapse.java --serve
 * runs the JDK's jfr tool (jdk.jfr.internal.tool.Main, what the jfr launcher
 * runs) once per line of its input, in this one JVM: a line is
 *     <stdout file> TAB <stderr file> TAB <jfr argument> [TAB <jfr argument>...]
 * and when the tool is done it prints "# TOOL <exit status>". The tool ends
 * with System.exit whatever happens; a security manager turns the first exit
 * of a run into its status, and whatever the tool prints after it (its catch-all
 * handler takes the trap for an internal error) goes nowhere. A JVM per call
 * was ~150 starts of the JDK for the corpus.
 */
import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

public class JfrCollapse {
    private static final java.util.regex.Pattern REMOTE_DESC =
        java.util.regex.Pattern.compile("\\(L(0x[0-9a-f]+);\\)L;");
    private static int errors;

    private static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
            case '\\': b.append("\\\\"); break;
            case ';': b.append("\\;"); break;
            case '\n': b.append("\\n"); break;
            case '\r': b.append("\\r"); break;
            default: b.append(c);
            }
        }
        return b.toString();
    }

    private static void error(Writer out, String msg) throws IOException {
        errors++;
        out.write("# ERROR " + msg.replace('\n', ' ') + "\n");
    }

    /* The frame's name, or null (after printing an error) when it does not resolve. */
    private static String frameName(Writer out, String where, RecordedFrame f) throws IOException {
        RecordedMethod m = f.getMethod();
        if (m == null) {
            error(out, where + ": frame without a method");
            return null;
        }
        String name = m.getName();
        RecordedClass c = m.getType();
        if (name == null) {
            error(out, where + ": method without a name");
            return null;
        }
        if (c == null || c.getName() == null) {
            error(out, where + ": method " + name + " without a class");
            return null;
        }
        if (f.getType() == null) {
            error(out, where + ": frame " + name + " without a frame type");
            return null;
        }
        StringBuilder b = new StringBuilder();
        if (!c.getName().isEmpty())
            b.append(esc(c.getName())).append('.');
        b.append(esc(name));
        if (name.equals("<remote>")) {
            String d = m.getDescriptor();
            if (d == null) {
                error(out, where + ": <remote> method without a descriptor");
                return null;
            }
            // conv writes the address as a parameter type, (L0x...;)L;: shown as jfr print shows it
            java.util.regex.Matcher rm = REMOTE_DESC.matcher(d);
            b.append(esc(rm.matches() ? "(" + rm.group(1) + ")" : d));
        }
        int line = f.getLineNumber();
        if (line > 0)
            b.append(':').append(line);
        return b.toString();
    }

    private static void collapse(Writer out, String file) throws IOException {
        Map<String, Long> stacks = new TreeMap<>();
        Map<String, Long> counts = new TreeMap<>();
        TreeSet<String> libs = new TreeSet<>();
        long samples = 0;
        out.write("# FILE " + file + "\n");
        try (RecordingFile rf = new RecordingFile(Path.of(file))) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                String type = e.getEventType().getName();
                counts.merge(type, 1L, Long::sum);
                if (type.equals("jdk.NativeLibrary")) {
                    libs.add(e.getString("name") + "|" + e.getLong("baseAddress") + "|"
                             + e.getLong("topAddress") + "|" + e.getString("buildId") + "|"
                             + e.getLong("loadBias"));
                    continue;
                }
                boolean sample = type.equals("jdk.ExecutionSample")
                                 || (type.startsWith("perf.") && !type.equals("perf.LostSamples"));
                if (!sample)
                    continue;
                String where = type + " @" + e.getStartTime();
                if (!e.hasField("stackTrace")) {
                    error(out, where + ": no stackTrace field");
                    continue;
                }
                String tf = type.equals("jdk.ExecutionSample") ? "sampledThread" : "eventThread";
                RecordedThread t = e.hasField(tf) ? e.getThread(tf) : null;
                if (t == null)
                    error(out, where + ": " + tf + " does not resolve");
                else if (t.getOSName() == null)
                    error(out, where + ": thread " + t.getOSThreadId() + " without a name");
                RecordedStackTrace st = e.getStackTrace();
                if (st == null) {
                    error(out, where + ": stackTrace does not resolve");
                    continue;
                }
                List<RecordedFrame> frames = st.getFrames();
                List<String> names = new ArrayList<>(frames.size());
                boolean ok = true;
                for (RecordedFrame f : frames) {
                    String n = frameName(out, where, f);
                    if (n == null) {
                        ok = false;
                        break;
                    }
                    names.add(n);
                }
                if (!ok)
                    continue;
                StringBuilder key = new StringBuilder(esc(type));
                for (int i = names.size() - 1; i >= 0; i--)
                    key.append(';').append(names.get(i));
                stacks.merge(key.toString(), 1L, Long::sum);
                samples++;
            }
        } catch (Exception | Error x) {
            error(out, file + ": " + x);
        }
        for (Map.Entry<String, Long> c : counts.entrySet())
            out.write("# COUNT " + c.getKey() + " " + c.getValue() + "\n");
        for (String l : libs)
            out.write("# LIB " + l + "\n");
        for (Map.Entry<String, Long> s : stacks.entrySet())
            out.write(s.getKey() + " " + s.getValue() + "\n");
        out.write("# END " + file + " " + samples + " " + stacks.size() + "\n");
    }

    /* The first System.exit of a tool run: its status. */
    private static final class ExitTrap extends SecurityException {
        private static final long serialVersionUID = 1L;
        ExitTrap() { super("jfr tool exit"); }
    }
    private static volatile Integer exitStatus;
    private static final java.io.PrintStream NOWHERE =
        new java.io.PrintStream(java.io.OutputStream.nullOutputStream());

    @SuppressWarnings("removal")
    private static void serve() throws Exception {
        java.io.PrintStream out = System.out, err = System.err;
        java.lang.reflect.Method tool =
            Class.forName("jdk.jfr.internal.tool.Main").getMethod("main", String[].class);
        System.setSecurityManager(new SecurityManager() {
            @Override public void checkPermission(java.security.Permission p) { }
            @Override public void checkPermission(java.security.Permission p, Object ctx) { }
            @Override public void checkExit(int status) {
                if (exitStatus == null) {
                    exitStatus = status;
                    System.setOut(NOWHERE);
                    System.setErr(NOWHERE);
                }
                throw new ExitTrap();
            }
        });
        java.io.BufferedReader in = new java.io.BufferedReader(
            new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t", -1);
            int status;
            try (java.io.PrintStream o = new java.io.PrintStream(new FileOutputStream(f[0]));
                 java.io.PrintStream e = new java.io.PrintStream(new FileOutputStream(f[1]), true)) {
                exitStatus = null;
                System.setOut(o);
                System.setErr(e);
                try {
                    tool.invoke(null, (Object) java.util.Arrays.copyOfRange(f, 2, f.length));
                } catch (java.lang.reflect.InvocationTargetException x) {
                    if (!(x.getCause() instanceof ExitTrap))
                        x.getCause().printStackTrace(e);
                } finally {
                    status = exitStatus != null ? exitStatus : 1;
                    System.setOut(out);
                    System.setErr(err);
                    o.flush();
                }
            }
            out.println("# TOOL " + status);
            out.flush();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--serve")) {
            serve();
            return;
        }
        Writer out = new BufferedWriter(new OutputStreamWriter(
            new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8), 1 << 16);
        for (String f : args)
            collapse(out, f);
        out.flush();
        System.exit(errors == 0 ? 0 : 1);
    }
}
