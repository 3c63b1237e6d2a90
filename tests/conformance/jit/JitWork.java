// CPU-bound workload for test_jit.py: a few hot methods with distinct names,
// called in a loop long enough (argv[0] ms, default 1500) for C1 and C2 to
// compile them, so their samples land in JIT code named by the perf map the
// JVM writes at exit (-XX:+DumpPerfMapAtExit).
public final class JitWork {
    static long sink;

    static long hotAlphaMix(long x) {
        for (int i = 0; i < 2000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L ^ (x >>> 29);
        return x;
    }

    static double hotBetaSqrt(double d) {
        for (int i = 0; i < 1500; i++)
            d = Math.sqrt(d * 1.0000001 + i) + 0.5;
        return d;
    }

    static int hotGammaArray(int[] a, int seed) {
        int s = seed;
        for (int i = 0; i < a.length; i++) {
            a[i] = a[i] * 31 + s;
            s ^= a[i] >>> 7;
        }
        return s;
    }

    public static void main(String[] args) {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 1500;
        long end = System.nanoTime() + ms * 1_000_000L;
        int[] arr = new int[4096];
        double d = 1.0;
        long x = 42;
        int s = 7;
        while (System.nanoTime() < end) {
            for (int k = 0; k < 50; k++) {
                x = hotAlphaMix(x);
                d = hotBetaSqrt(d);
                s = hotGammaArray(arr, s);
            }
        }
        sink = x + (long) d + s;
        System.out.println(sink);
    }
}
