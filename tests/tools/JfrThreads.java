/*
 * java JfrThreads.java FILE...: per FILE, a line "FILE<TAB>N" with the
 * number of distinct threads its events name (sampledThread, else
 * eventThread), told apart as the JDK's parser tells them: by the
 * thread's pool key (RecordedThread.getId()), which `jfr print` does not
 * show. For tests that two threads of one tid (two recordings merged)
 * stay two.
 */
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

public class JfrThreads {
    public static void main(String[] args) throws Exception {
        for (String f : args) {
            Set<Long> ids = new HashSet<>();
            for (RecordedEvent e : RecordingFile.readAllEvents(Path.of(f))) {
                RecordedThread t = e.hasField("sampledThread") ? e.getThread("sampledThread")
                        : e.hasField("eventThread") ? e.getThread("eventThread") : null;
                if (t != null)
                    ids.add(t.getId());
            }
            System.out.println(f + "\t" + ids.size());
        }
    }
}
