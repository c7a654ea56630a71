/* cyclades through the command: its options, the JSON report and the
 * bench rows beside Hogwild!'s (the library's tests: test_cyclades.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* dir/g.svm: 3000 rows of `hogtrain gen` text, written by the command. */
static void gen_text(const char *dir)
{
    char out[4096];
    int rc = th_run(out, sizeof out,
                    "'%s' gen --rows 3000 --features 5000 --seed 4 -o %s/g.svm "
                    "2>&1", th_bin(), dir);
    cr_assert_eq(rc, 0, "%s", out);
}

Test(cyclades, command_options_and_json_report)
{
    char dir[256], out[8192];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *bin = th_bin();
    gen_text(dir);
    int rc = th_run(out, sizeof out,
                "'%s' train --deterministic --threads 2 --epochs 2 "
                "--batch-size 64 --hot 30 --json %s/a.json -o %s/a.hgm "
                "%s/g.svm 2>&1",
                bin, dir, dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "cyclades: 2 threads"), "%s", out);
    cr_assert(strstr(out, "components per batch"), "%s", out);
    rc = th_run(out, sizeof out, "cat %s/a.json", dir);
    cr_assert(strstr(out, "\"algo\": \"cyclades\""), "%s", out);
    cr_assert(strstr(out, "\"batch_size\": 64"), "%s", out);
    cr_assert(strstr(out, "\"hot_degree\": 30"), "%s", out);
    cr_assert(strstr(out, "\"partition_seconds\""), "%s", out);
    cr_assert(strstr(out, "\"components_every_feature\""), "%s", out);
    /* one thread: the same model file, byte for byte */
    rc = th_run(out, sizeof out,
                "'%s' train -q --algo cyclades --threads 1 --epochs 2 "
                "--batch-size 64 --hot 30 -o %s/b.hgm %s/g.svm 2>&1 && "
                "cmp %s/a.hgm %s/b.hgm",
                bin, dir, dir, dir, dir);
    cr_assert_eq(rc, 0, "%s", out);

    rc = th_run(out, sizeof out, "'%s' train --batch-size 10 %s/g.svm 2>&1",
                bin, dir);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--algo cyclades only"), "%s", out);
    rc = th_run(out, sizeof out,
                "'%s' train --deterministic --algo hogwild %s/g.svm 2>&1", bin,
                dir);
    cr_assert_eq(rc, 2, "%s", out);
    rc = th_run(out, sizeof out,
                "'%s' train --algo cyclades --hot lots %s/g.svm 2>&1", bin, dir);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--hot"), "%s", out);
    /* --hot 0 is off, as for Hogwild!: the library's one field
     * (cyclades_hot_degree) holds both */
    rc = th_run(out, sizeof out,
                "'%s' train -q --algo cyclades --threads 2 --epochs 2 "
                "--batch-size 64 --hot 0 --json %s/z.json -o %s/z.hgm "
                "%s/g.svm 2>&1 && '%s' train -q --algo cyclades --threads 2 "
                "--epochs 2 --batch-size 64 --hot off -o %s/off.hgm %s/g.svm "
                "2>&1 && cmp %s/z.hgm %s/off.hgm && cat %s/z.json",
                bin, dir, dir, dir, bin, dir, dir, dir, dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "\"hot\": false"), "%s", out);
    cr_assert(strstr(out, "\"hot_degree\": 0"), "%s", out);
    rc = th_run(out, sizeof out,
                "'%s' train --algo cyclades --batch-size 0 %s/g.svm 2>&1", bin,
                dir);
    cr_assert_eq(rc, 2, "%s", out);
}

/* hogtrain bench --algo hogwild,cyclades: Cyclades rows beside Hogwild!'s
 * and the locked modes, with the target line; the same model at 1 and 2
 * threads shows as the same final objective. --algo cyclades alone runs no
 * Hogwild! grid. */
Test(cyclades, bench_rows_beside_hogwild)
{
    char dir[256], out[16384];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *bin = th_bin();
    gen_text(dir);
    int rc = th_run(out, sizeof out,
                "'%s' bench %s/g.svm --algo hogwild,cyclades --threads 1,2 "
                "--epochs 2 --repeat 1 -q --csv %s/b.csv 2>&1",
                bin, dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "hogwild  mutex"), "%s", out);
    cr_assert(strstr(out, "cyclades -        -              2"), "%s", out);
    cr_assert(strstr(out, "Cyclades at 2 threads: parallel efficiency"), "%s",
              out);
    cr_assert(strstr(out, "Hogwild!'s nonzeros/s") &&
                  strstr(out, "the fastest locked mode"),
              "%s", out);
    /* the CSV's two Cyclades rows: one objective */
    rc = th_run(out, sizeof out,
                "grep '^cyclades,' %s/b.csv | cut -d, -f11 | sort -u | wc -l",
                dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_str_eq(out, "1\n", "Cyclades' objective differs between 1 and "
                     "2 threads");
    rc = th_run(out, sizeof out,
                "'%s' bench %s/g.svm --algo cyclades --threads 1 --epochs 1 "
                "--repeat 1 -q 2>&1", bin, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "cyclades") && !strstr(out, "hogwild  none"), "%s",
              out);
    rc = th_run(out, sizeof out,
                "'%s' bench %s/g.svm --algo scd -q 2>&1", bin, dir);
    cr_assert_eq(rc, 2, "%s", out);
}
