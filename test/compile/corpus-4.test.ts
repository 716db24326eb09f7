// The real-project corpus of issues #22 and #39, fourth quarter (real-projects.ts says how).
import { realProjects } from './real-projects.js';

realProjects(3);
