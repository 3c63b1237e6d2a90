/* Spends its time in libc: qsort (msort_with_tmp, the comparison callback) and
 * malloc/free of small blocks (free's code is one address with the aliases free,
 * __libc_free, cfree@GLIBC_2.2.5 in libc6-dbg's .symtab). Argument: rounds. */
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	unsigned s = 1;
	long sum = 0;

	for (int r = 0; r < rounds; r++) {
		int n = 20000;
		int *v = malloc(n * sizeof(*v));
		void *keep[64];

		if (!v)
			return 1;
		for (int i = 0; i < n; i++) {
			s = s * 1103515245 + 12345;
			v[i] = (int)(s >> 8);
		}
		qsort(v, n, sizeof(*v), cmp);
		sum += v[n / 2];
		for (int k = 0; k < 20000; k++) {
			keep[k % 64] = malloc(16 + k % 200);
			if (k % 64 == 63)
				for (int j = 0; j < 64; j++)
					free(keep[j]);
		}
		free(v);
	}
	printf("%ld\n", sum);
	return 0;
}
