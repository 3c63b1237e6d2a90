// CPU-bound workload for test_jfr_java.py. Four hot methods in a package, with
// parameter and return types covering every kind of JVM descriptor element
// (primitives, arrays, multi-dimensional arrays, object types, a nested class,
// an instance method), each called in a loop long enough (argv[0] ms, default
// 1500) for C1 and C2 to compile them. The JVM's perf map
// (-XX:+DumpPerfMapAtExit) then names their code, e.g.
//     void conv.jfrtest.JfrJitWork.hotLoop(int[])
// which conv's JFR writer must turn into class conv/jfrtest/JfrJitWork, method
// hotLoop, descriptor ([I)V. The test runs the JVM with
// -XX:CompileCommand=dontinline for these methods so their code stays separate.
package conv.jfrtest;

public final class JfrJitWork {
    static long sink;
    static final String[] WORDS = {"alpha", "beta", "gamma", "delta"};

    // ([I)V
    static void hotLoop(int[] a) {
        for (int r = 0; r < 3; r++)
            for (int i = 0; i < a.length; i++)
                a[i] = a[i] * 31 + (a[i] >>> 7) + i;
    }

    // (JZC)J
    static long hotMix(long x, boolean flip, char c) {
        for (int i = 0; i < 1500; i++) {
            x = x * 6364136223846793005L + c ^ (x >>> 29);
            if (flip)
                x = Long.rotateLeft(x, 7);
        }
        return x;
    }

    // (Ljava/lang/Object;BS)Ljava/lang/String;
    static String hotText(Object o, byte b, short s) {
        int h = o.hashCode();
        for (int i = 0; i < 2500; i++)
            h = h * 31 + (b ^ s ^ i) + (h >>> 13);
        return WORDS[h & 3];
    }

    static final class Inner {
        final float scale;

        Inner(float scale) {
            this.scale = scale;
        }

        // ([[DF)[[D, an instance method of conv.jfrtest.JfrJitWork$Inner
        double[][] hotGrid(double[][] g, float f) {
            for (double[] row : g)
                for (int j = 0; j < row.length; j++)
                    row[j] = Math.sqrt(row[j] * f + j) * scale;
            return g;
        }
    }

    public static void main(String[] args) {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 1500;
        long end = System.nanoTime() + ms * 1_000_000L;
        int[] arr = new int[2048];
        double[][] grid = new double[24][24];
        Inner inner = new Inner(0.5f);
        long x = 42;
        String w = "seed";
        int k = 0;
        while (System.nanoTime() < end) {
            for (int n = 0; n < 20; n++, k++) {
                hotLoop(arr);
                x = hotMix(x, (k & 1) == 0, (char) ('a' + (k & 15)));
                w = hotText(w, (byte) k, (short) (k >> 3));
                grid = inner.hotGrid(grid, 1.0001f);
            }
        }
        sink = x + arr[7] + w.length() + (long) grid[3][5];
        System.out.println(sink);
    }
}
