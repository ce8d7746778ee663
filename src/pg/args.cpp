/*
 * args.cpp: reading and validating the SQL arguments shared by kmeans(),
 * kmeans_centroids() and kmeans_fit(), and the engine options they make.
 */
#include "args.h"
#include "budget.h"
#include "errors.h"
#include "module.h"

#include <cmath>

/*
 * Why a table per option: one place holds both the accepted spellings and
 * the list printed in the hint, so the two never disagree. The canonical
 * name is what the hint lists and what a model stores; `other` is one more
 * spelling of it (MADlib's kmeanspp, the "cuda" of PyTorch and RAPIDS).
 * Spellings are compared after normalize().
 */
typedef struct NamedValue
{
	const char *name;
	int32		value;
	const char *other;			/* normalized, or NULL */
} NamedValue;

/* scikit-learn's pairwise kernel names; poly is its other name, gaussian Popcorn's */
static const NamedValue kernels[] = {
	{"linear", PGKM_KERNEL_LINEAR, NULL}, {"polynomial", PGKM_KERNEL_POLYNOMIAL, "poly"},
	{"rbf", PGKM_KERNEL_RBF, "gaussian"}, {"sigmoid", PGKM_KERNEL_SIGMOID, NULL},
	{NULL, 0, NULL}};
static const NamedValue inits[] = {
	{"k-means++", PGKM_INIT_KMEANSPP, "kmeanspp"},
	{"random", PGKM_INIT_RANDOM, NULL},
	{"k-means||", PGKM_INIT_KMEANS_PARALLEL, "kmeansparallel"}, {NULL, 0, NULL}};
static const NamedValue devices[] = {
	{"auto", PGKM_DEVICE_AUTO, NULL}, {"cpu", PGKM_DEVICE_CPU, NULL},
	{"gpu", PGKM_DEVICE_GPU, "cuda"}, {NULL, 0, NULL}};

/*
 * The methods are the engine's, named by pgkm_method_name in code order, so
 * a method added to the engine needs no line here. Codes are below
 * PGKM_METHOD_CODES.
 */
#define PGKM_METHOD_CODES 64
static NamedValue methods[PGKM_METHOD_CODES + 1];

static const NamedValue *
method_table(void)
{
	if (methods[0].name == NULL)
	{
		int			n = 0;

		for (int32 m = 0; m < PGKM_METHOD_CODES; m++)
			if (pgkm_method_name(m) != NULL)
				methods[n++] = NamedValue{pgkm_method_name(m), m, NULL};
	}
	return methods;
}

/*
 * The spelling of an option value, for comparison: ASCII lower case, with
 * '-', '_' and white space dropped, so that K-Means++, k_means++, kmeans++
 * and 'k means ++' are one value. Every other character counts, so
 * k-means+ is not k-means++ and k-means| not k-means||.
 */
static char *
normalize(const char *given)
{
	char	   *out = (char *) palloc(strlen(given) + 1);
	char	   *o = out;

	for (const char *p = given; *p; p++)
	{
		if (*p == '-' || *p == '_' || isspace((unsigned char) *p))
			continue;
		*o++ = pg_ascii_tolower((unsigned char) *p);
	}
	*o = '\0';
	return out;
}

/*
 * Look a text argument up in a table and return its entry; an unknown
 * value is an error whose hint lists every canonical name.
 */
static const NamedValue *
lookup_named(const NamedValue *table, const char *given, const char *what,
			 const char *what_plural)
{
	StringInfoData valid;
	char	   *spelling = normalize(given);

	for (const NamedValue *e = table; e->name; e++)
		if (strcmp(normalize(e->name), spelling) == 0 ||
			(e->other && strcmp(e->other, spelling) == 0))
			return e;
	initStringInfo(&valid);
	for (const NamedValue *e = table; e->name; e++)
		appendStringInfo(&valid, "%s%s", e == table ? "" : ", ", e->name);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown %s \"%s\"", what, pgkm_echo_name(given)),
			 errhint("Valid %s are: %s.", what_plural, valid.data)));
	return NULL;				/* not reached */
}

bool
pgkm_kernel_by_name(const char *name, int32 *kernel)
{
	for (const NamedValue *e = kernels; e->name; e++)
		if (strcmp(e->name, name) == 0)
		{
			*kernel = e->value;
			return true;
		}
	return false;
}

/*
 * Is one of the arguments under the STRICT rule NULL (the model name, then
 * kmeans()'s first PGKM_STRICT_ARGS)? Then the call returns no rows
 * (kmeans_fit: NULL), as a STRICT function would. The functions are not
 * declared STRICT because their kernel arguments default to NULL, which
 * means "not given".
 */
bool
pgkm_args_have_null(FunctionCallInfo fcinfo, int first)
{
	for (int i = 0; i < first + PGKM_STRICT_ARGS; i++)
		if (PG_ARGISNULL(i))
			return true;
	return false;
}

/* An argument that does not apply to the method or kernel chosen: an error saying so. */
static void
refuse_argument(const char *arg, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("argument %s does not apply to %s", arg, what),
			 errhint("Omit %s, or choose a method and kernel that use it.", arg)));
}

/*
 * The kernel arguments (positions first + 10 .. first + 13, NULL = not
 * given). scikit-learn's defaults: kernel rbf, gamma 1 / n_features (left
 * 0 here: the engine knows d), coef0 1, degree 3. An argument the chosen
 * method or kernel does not use is an error, not silently ignored.
 */
static void
parse_kernel_args(FunctionCallInfo fcinfo, int first, PgkmArgs *args)
{
	const int	pos = first + PGKM_STRICT_ARGS;
	static const char *const names[] = {"kernel", "gamma", "coef0", "degree"};

	args->kernel = PGKM_KERNEL_RBF;
	args->kernel_name = "rbf";
	args->gamma = 0;
	args->coef0 = 1;
	args->degree = 3;
	if (args->method != PGKM_METHOD_KERNEL)
	{
		for (int i = 0; i < 4; i++)
			if (!PG_ARGISNULL(pos + i))
				refuse_argument(names[i], psprintf("method \"%s\"", args->method_name));
		return;
	}
	if (!PG_ARGISNULL(pos))
	{
		const NamedValue *kv = lookup_named(kernels, text_to_cstring(PG_GETARG_TEXT_PP(pos)),
											"kernel", "kernels");

		args->kernel = kv->value;
		args->kernel_name = kv->name;
	}
	if (!PG_ARGISNULL(pos + 1))
	{
		if (args->kernel == PGKM_KERNEL_LINEAR)
			refuse_argument("gamma", "the linear kernel");
		args->gamma = PG_GETARG_FLOAT8(pos + 1);
		if (!(args->gamma > 0) || std::isinf(args->gamma))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("gamma must be a finite number > 0, got %g", args->gamma)));
	}
	if (!PG_ARGISNULL(pos + 2))
	{
		if (args->kernel != PGKM_KERNEL_POLYNOMIAL && args->kernel != PGKM_KERNEL_SIGMOID)
			refuse_argument("coef0", psprintf("the %s kernel", args->kernel_name));
		args->coef0 = PG_GETARG_FLOAT8(pos + 2);
		if (!std::isfinite(args->coef0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("coef0 must be a finite number, got %g", args->coef0)));
	}
	if (!PG_ARGISNULL(pos + 3))
	{
		if (args->kernel != PGKM_KERNEL_POLYNOMIAL)
			refuse_argument("degree", psprintf("the %s kernel", args->kernel_name));
		args->degree = PG_GETARG_INT32(pos + 3);
		if (args->degree < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("degree must be at least 1, got %d", args->degree)));
	}
}

bool
pgkm_kernel_needs_origin(int32 kernel)
{
	return kernel == PGKM_KERNEL_POLYNOMIAL || kernel == PGKM_KERNEL_SIGMOID;
}

bool
pgkm_shift_allowed(const PgkmArgs *args)
{
	return args->method != PGKM_METHOD_KERNEL || !pgkm_kernel_needs_origin(args->kernel);
}

/*
 * Read the arguments starting at position `first` (0 for kmeans(), 1 for
 * kmeans_fit(), whose first argument is the model name). Why validate
 * everything here, before touching the table: a typo in an option should
 * fail in microseconds, not after a scan of ten million rows. The one check
 * that needs the data (k <= usable rows) happens after the scan.
 */
void
pgkm_parse_args(FunctionCallInfo fcinfo, int first, PgkmArgs *args)
{
	ArrayType  *cols;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;

	memset(args, 0, sizeof(*args));
	args->relid = PG_GETARG_OID(first);
	cols = PG_GETARG_ARRAYTYPE_P(first + 1);
	args->k = PG_GETARG_INT32(first + 2);
	args->max_iter = PG_GETARG_INT32(first + 4);
	args->tol = PG_GETARG_FLOAT8(first + 5);
	args->n_init = PG_GETARG_INT32(first + 7);
	args->seed = PG_GETARG_INT64(first + 8);

	if (ARR_NDIM(cols) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("columns must be a one-dimensional array")));
	deconstruct_array(cols, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &nelems);
	if (nelems < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("columns must name at least one column"),
				 errhint("For example: ARRAY['x', 'y'].")));
	args->ncols = nelems;
	args->colnames = (char **) palloc(sizeof(char *) * nelems);
	for (int i = 0; i < nelems; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("columns must not contain NULL")));
		args->colnames[i] = TextDatumGetCString(elems[i]);
	}

	if (args->k < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must be at least 1, got %d", args->k)));
	if (args->max_iter < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_iter must be at least 1, got %d", args->max_iter)));
	if (!(args->tol >= 0) || std::isinf(args->tol))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tol must be a finite number >= 0, got %g", args->tol)));
	if (args->n_init < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n_init must be at least 1, got %d", args->n_init)));

	{
		const NamedValue *m = lookup_named(method_table(),
										   text_to_cstring(PG_GETARG_TEXT_PP(first + 3)),
										   "k-means method", "methods");
		const NamedValue *in = lookup_named(inits,
											text_to_cstring(PG_GETARG_TEXT_PP(first + 6)),
											"init method", "init methods");
		const NamedValue *dv = lookup_named(devices,
											text_to_cstring(PG_GETARG_TEXT_PP(first + 9)),
											"device", "devices");

		args->method = m->value;
		args->method_name = m->name;
		args->init = in->value;
		args->init_name = in->name;
		args->device = dv->value;
		args->device_name = dv->name;
	}
	if (args->method == PGKM_METHOD_KERNEL && args->init == PGKM_INIT_KMEANS_PARALLEL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("init k-means|| does not apply to method kernel"),
				 errdetail("k-means|| draws its candidates by distances in the input space."),
				 errhint("Use init => 'k-means++' (in the kernel's feature space) or 'random'.")));
	parse_kernel_args(fcinfo, first, args);
}

/*
 * Where the GPU plugin lives: the pg_kmeans.gpu_plugin setting, else the
 * installed $libdir/pg_kmeans_cuda.so. Why pkglib_path and not "$libdir":
 * the engine dlopen()s a plain path and knows nothing of PostgreSQL.
 */
void
pgkm_gpu_plugin_path(char *buf, size_t len)
{
	if (pgkm_guc_gpu_plugin && pgkm_guc_gpu_plugin[0] != '\0')
		strlcpy(buf, pgkm_guc_gpu_plugin, len);
	else
		snprintf(buf, len, "%s/pg_kmeans_cuda.so", pkglib_path);
}

void
pgkm_build_options(const PgkmArgs *args, const PgkmData *data, bool need_tids,
				   pgkm_options *opt, char *plugin_path, size_t plugin_len)
{
	int64		engine_limit = pgkm_engine_memory_limit(data, need_tids);

	pgkm_options_default(opt);
	opt->k = args->k;
	opt->max_iter = args->max_iter;
	opt->tol = args->tol;
	opt->init = args->init;
	opt->initial_centroids = NULL;
	opt->n_init = args->n_init;
	opt->seed = (uint64_t) args->seed;
	opt->method = args->method;
	opt->device = args->device;
	/* more threads than cores only wait on each other (and any user may set it) */
	opt->n_threads = pgkm_guc_threads > 0 ? Min(pgkm_guc_threads, pgkm_usable_cores()) : 0;
	pgkm_gpu_plugin_path(plugin_path, plugin_len);
	opt->gpu_plugin_path = plugin_path;
	opt->gpu_memory_limit = (int64_t) pgkm_guc_gpu_memory_limit_kb * 1024;
	opt->kernel = args->kernel;
	opt->gamma = args->gamma;
	opt->coef0 = args->coef0;
	opt->degree = args->degree;
	if (engine_limit > 0)
		opt->memory_limit = engine_limit;
}
